package flowcontrol

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the apiserver_flowcontrol_* metrics, with upstream's names,
// labels and buckets (k8s.io/apiserver/pkg/util/flowcontrol/metrics). A
// nil *Metrics records nothing.
type Metrics struct {
	dispatchedTotal      *prometheus.CounterVec
	rejectedTotal        *prometheus.CounterVec
	inqueueRequests      *prometheus.GaugeVec
	inqueueSeats         *prometheus.GaugeVec
	executingReqs        *prometheus.GaugeVec
	executingSeats       *prometheus.GaugeVec
	waitDuration         *prometheus.HistogramVec
	executionSeconds     *prometheus.HistogramVec
	workSeats            *prometheus.HistogramVec
	watchCount           *prometheus.HistogramVec
	queueLength          *prometheus.HistogramVec
	noAccommodationTotal *prometheus.CounterVec
	nominalLimit         *prometheus.GaugeVec
	currentLimit         *prometheus.GaugeVec
	lowerLimit           *prometheus.GaugeVec
	upperLimit           *prometheus.GaugeVec
	// The borrowing adjustment's statistics, set every AdjustmentPeriod
	// (upstream's NotePriorityLevelConcurrencyAdjustment and SetFairFrac).
	demandHWM, demandAvg, demandStdev *prometheus.GaugeVec
	demandSmoothed, targetSeats       *prometheus.GaugeVec
	fairFrac                          prometheus.Gauge
	// Upstream's timing ratio histograms, per priority level: seats in
	// use and requests waiting and executing over their limits, and the
	// seat demand over the current limit.
	seatUtil, reqUtil, demandSeats *timingRatioVec
	// read_vs_write_current_requests: requests waiting and executing by
	// kind over the configuration's queue capacity and nominal seats.
	readWrite                              *timingRatioVec
	waitingRO, waitingMut, execRO, execMut *timingRatio
}

var durationBuckets = []float64{0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30}

// NewMetrics makes the metrics and registers them on reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	pf := []string{"priority_level", "flow_schema"}
	pl := []string{"priority_level"}
	m := &Metrics{
		dispatchedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_flowcontrol_dispatched_requests_total",
			Help: "[BETA] Number of requests executed by API Priority and Fairness subsystem"}, pf),
		rejectedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_flowcontrol_rejected_requests_total",
			Help: "[BETA] Number of requests rejected by API Priority and Fairness subsystem"}, append(pf[:2:2], "reason")),
		inqueueRequests: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_inqueue_requests",
			Help: "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem"}, pf),
		inqueueSeats: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_inqueue_seats",
			Help: "[ALPHA] Number of seats currently pending in queues of the API Priority and Fairness subsystem"}, pf),
		executingReqs: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_executing_requests",
			Help: "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem"}, pf),
		executingSeats: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_executing_seats",
			Help: "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem"}, pf),
		waitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_request_wait_duration_seconds",
			Help: "[BETA] Length of time a request spent waiting in its queue", Buckets: durationBuckets}, append(pf[:2:2], "execute")),
		executionSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_request_execution_seconds",
			Help: "[ALPHA] Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem", Buckets: durationBuckets}, append(pf[:2:2], "type")),
		workSeats: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_work_estimated_seats",
			Help: "[ALPHA] Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness", Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 100}}, pf),
		queueLength: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_request_queue_length_after_enqueue",
			Help: "[ALPHA] Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued", Buckets: []float64{0, 10, 25, 50, 100, 250, 500, 1000}}, pf),
		noAccommodationTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_flowcontrol_request_dispatch_no_accommodation_total",
			Help: "[ALPHA] Number of times a dispatch attempt resulted in a non accommodation due to lack of available seats"}, pf),
		watchCount: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_watch_count_samples",
			Help: "[ALPHA] count of watchers for mutating requests in API Priority and Fairness", Buckets: []float64{0, 1, 10, 100, 1000, 10000}}, pf),
		nominalLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_nominal_limit_seats",
			Help: "[BETA] Nominal number of execution seats configured for each priority level"}, pl),
		currentLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_limit_seats",
			Help: "[ALPHA] current derived number of execution seats available to each priority level"}, pl),
		lowerLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_lower_limit_seats",
			Help: "[ALPHA] Configured lower bound on number of execution seats available to each priority level"}, pl),
		upperLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_upper_limit_seats",
			Help: "[ALPHA] Configured upper bound on number of execution seats available to each priority level"}, pl),
		demandHWM: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_demand_seats_high_watermark",
			Help: "[ALPHA] High watermark, over last adjustment period, of demand_seats"}, pl),
		demandAvg: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_demand_seats_average",
			Help: "[ALPHA] Time-weighted average, over last adjustment period, of demand_seats"}, pl),
		demandStdev: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_demand_seats_stdev",
			Help: "[ALPHA] Time-weighted standard deviation, over last adjustment period, of demand_seats"}, pl),
		demandSmoothed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_demand_seats_smoothed",
			Help: "[ALPHA] Smoothed seat demands"}, pl),
		targetSeats: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_target_seats",
			Help: "[ALPHA] Seat allocation targets"}, pl),
		fairFrac: newFairFrac(),
		seatUtil: newTimingRatioVec("apiserver_flowcontrol_priority_level_seat_utilization",
			"[ALPHA] Observations, at the end of every nanosecond, of utilization of seats for any stage of execution (but only initial stage for WATCHes)",
			[]float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1}, prometheus.Labels{"phase": "executing"}, "priority_level"),
		reqUtil: newTimingRatioVec("apiserver_flowcontrol_priority_level_request_utilization",
			"[ALPHA] Observations, at the end of every nanosecond, of number of requests (as a fraction of the relevant limit) waiting or in any stage of execution (but only initial stage for WATCHes)",
			[]float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 1}, nil, "phase", "priority_level"),
		demandSeats: newTimingRatioVec("apiserver_flowcontrol_demand_seats",
			"[ALPHA] Observations, at the end of every nanosecond, of (the number of seats each priority level could use) / (nominal number of seats for that level)",
			[]float64{0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6}, nil, "priority_level"),
		readWrite: newReadWriteVec(),
	}
	// Upstream makes the four series when the filter is built, each at
	// 0/1.
	m.waitingRO = m.readWrite.with(0, 1, "waiting", "readOnly")
	m.execRO = m.readWrite.with(0, 1, "executing", "readOnly")
	m.waitingMut = m.readWrite.with(0, 1, "waiting", "mutating")
	m.execMut = m.readWrite.with(0, 1, "executing", "mutating")
	if reg != nil {
		for _, c := range []prometheus.Collector{m.dispatchedTotal, m.rejectedTotal, m.inqueueRequests, m.inqueueSeats, m.executingReqs,
			m.executingSeats, m.waitDuration, m.executionSeconds, m.workSeats, m.watchCount, m.queueLength, m.noAccommodationTotal, m.nominalLimit, m.currentLimit, m.lowerLimit, m.upperLimit,
			m.demandHWM, m.demandAvg, m.demandStdev, m.demandSmoothed, m.targetSeats, m.fairFrac, m.seatUtil, m.reqUtil, m.demandSeats, m.readWrite} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// lazy is a series made on first use: upstream's series appear when
// first recorded, not when a schema is configured.
type lazy[T any] struct {
	once sync.Once
	v    T
}

func (l *lazy[T]) get(make func() T) T {
	l.once.Do(func() { l.v = make() })
	return l.v
}

// flowMetrics are one (priority level, flow schema) pair's metrics,
// looked up once per schema digest rather than on every request, each
// made when upstream would first record it.
type flowMetrics struct {
	m                             *Metrics
	pl, fs                        string
	dispatched                    lazy[prometheus.Counter]
	inqueueReqs, inqueueSeats     lazy[prometheus.Gauge]
	executingReqs, executingSeats lazy[prometheus.Gauge]
	waitExecuted, waitRejected    lazy[prometheus.Observer]
	execution, executionWatch     lazy[prometheus.Observer]
	seats, watches, queueLength   lazy[prometheus.Observer]
	noAccommodation               lazy[prometheus.Counter]
}

// forFlow returns the metrics of a schema's flows (nil without metrics).
func (m *Metrics) forFlow(pl, fs string) *flowMetrics {
	if m == nil {
		return nil
	}
	return &flowMetrics{m: m, pl: pl, fs: fs}
}

func (f *flowMetrics) counter(l *lazy[prometheus.Counter], v *prometheus.CounterVec) prometheus.Counter {
	return l.get(func() prometheus.Counter { return v.WithLabelValues(f.pl, f.fs) })
}

func (f *flowMetrics) gauge(l *lazy[prometheus.Gauge], v *prometheus.GaugeVec) prometheus.Gauge {
	return l.get(func() prometheus.Gauge { return v.WithLabelValues(f.pl, f.fs) })
}

func (f *flowMetrics) observer(l *lazy[prometheus.Observer], v *prometheus.HistogramVec, extra ...string) prometheus.Observer {
	return l.get(func() prometheus.Observer { return v.WithLabelValues(append([]string{f.pl, f.fs}, extra...)...) })
}

// dispatched notes a request's start of execution. queued: it went
// through a queue (every request of a limited level, as upstream's filter
// times the wait of every non-exempt request), waiting waited.
func (m *Metrics) dispatched(cls Classification, seats int, queued bool, waited time.Duration) {
	f := cls.fm
	if f == nil {
		return
	}
	if queued {
		f.observer(&f.waitExecuted, m.waitDuration, "true").Observe(waited.Seconds())
	}
	f.counter(&f.dispatched, m.dispatchedTotal).Inc()
	f.gauge(&f.executingReqs, m.executingReqs).Inc()
	f.gauge(&f.executingSeats, m.executingSeats).Add(float64(seats))
}

// executed notes the end of a request's execution (a watch's initial
// stage), labelled type="watch" for watches as upstream.
func (m *Metrics) executed(cls Classification, seats int, watch bool, d time.Duration) {
	f := cls.fm
	if f == nil {
		return
	}
	f.gauge(&f.executingReqs, m.executingReqs).Dec()
	f.gauge(&f.executingSeats, m.executingSeats).Sub(float64(seats))
	if watch {
		f.observer(&f.executionWatch, m.executionSeconds, "watch").Observe(d.Seconds())
	} else {
		f.observer(&f.execution, m.executionSeconds, "regular").Observe(d.Seconds())
	}
}

// rejectedReq notes a rejection. Upstream labels the wait of a request
// that was enqueued and then timed out or was cancelled execute="true"
// (its filter labels by whether it got a request handle, not by whether
// it ran); enqueued says so.
func (m *Metrics) rejectedReq(cls Classification, reason string, enqueued bool, waited time.Duration) {
	f := cls.fm
	if f == nil {
		return
	}
	f.m.rejectedTotal.WithLabelValues(f.pl, f.fs, reason).Inc()
	if enqueued {
		f.observer(&f.waitExecuted, m.waitDuration, "true").Observe(waited.Seconds())
	} else {
		f.observer(&f.waitRejected, m.waitDuration, "false").Observe(waited.Seconds())
	}
}

// enqueued notes a request entering a queue of length n (counting it),
// as upstream's queueset does for every request of a queuing level: one
// dispatched at once passes through its queue (reqs 0 leaves the
// in-queue gauges as they were, made).
func (m *Metrics) enqueued(cls Classification, reqs, seats, n int) {
	f := cls.fm
	if f == nil {
		return
	}
	f.gauge(&f.inqueueReqs, m.inqueueRequests).Add(float64(reqs))
	f.gauge(&f.inqueueSeats, m.inqueueSeats).Add(float64(seats))
	f.observer(&f.queueLength, m.queueLength).Observe(float64(n))
}

func (m *Metrics) inqueue(cls Classification, reqs, seats int) {
	f := cls.fm
	if f == nil {
		return
	}
	f.gauge(&f.inqueueReqs, m.inqueueRequests).Add(float64(reqs))
	f.gauge(&f.inqueueSeats, m.inqueueSeats).Add(float64(seats))
}

// estimated notes a request's work estimate, as upstream's filter and
// estimator do before the request is admitted: its seats (the larger of
// its initial and final seats) and, for a mutation, the watches it
// notifies.
func (m *Metrics) estimated(cls Classification, w Width, watchCount int64, sampled bool) {
	f := cls.fm
	if f == nil {
		return
	}
	if sampled {
		f.observer(&f.watches, m.watchCount).Observe(float64(watchCount))
	}
	f.observer(&f.seats, m.workSeats).Observe(float64(max(w.Seats, w.FinalSeats)))
}

// noAccommodation notes a dispatch attempt whose head request (of cls)
// did not fit in the free seats.
func (m *Metrics) noAccommodation(cls Classification) {
	f := cls.fm
	if f == nil {
		return
	}
	f.counter(&f.noAccommodation, m.noAccommodationTotal).Inc()
}

// setConfigLimits publishes lv's configured limits, as upstream does
// when it digests a configuration (lv.mu not held by the caller).
func (m *Metrics) setConfigLimits(lv *level) {
	if m == nil {
		return
	}
	s := lv.state()
	m.nominalLimit.WithLabelValues(s.Name).Set(float64(s.NominalCL))
	m.lowerLimit.WithLabelValues(s.Name).Set(float64(s.NominalCL - s.LendableCL))
	m.upperLimit.WithLabelValues(s.Name).Set(float64(s.BorrowingCL))
}

// adjusted publishes one level's borrowing adjustment: its seat demand
// statistics over the period, its target and its new current limit.
func (m *Metrics) adjusted(name string, st demandStats, target float64, currentCL int) {
	if m == nil {
		return
	}
	m.demandHWM.WithLabelValues(name).Set(float64(st.highWatermark))
	m.demandAvg.WithLabelValues(name).Set(st.avg)
	m.demandStdev.WithLabelValues(name).Set(st.stdDev)
	m.demandSmoothed.WithLabelValues(name).Set(st.smoothed)
	m.targetSeats.WithLabelValues(name).Set(target)
	m.currentLimit.WithLabelValues(name).Set(float64(currentCL))
}

func (m *Metrics) setFairFrac(f float64) {
	if m == nil {
		return
	}
	m.fairFrac.Set(f)
}

// levelGauges are one level's timing ratio histograms (nil without
// metrics; a nil *timingRatio records nothing).
type levelGauges struct {
	seats, waiting, executing, demand *timingRatio
}

// forLevel makes a new level's series, each at 0/1 (upstream's
// NewForLabelValuesSafe(0, 1, ...) when it creates a level's state).
func (m *Metrics) forLevel(name string) levelGauges {
	if m == nil {
		return levelGauges{}
	}
	return levelGauges{
		seats:     m.seatUtil.with(0, 1, name),
		waiting:   m.reqUtil.with(0, 1, "waiting", name),
		executing: m.reqUtil.with(0, 1, "executing", name),
		demand:    m.demandSeats.with(0, 1, name),
	}
}

// RequestKindObserver returns what to tell of the count of requests of
// each kind waiting in queues (waiting) or executing, for
// apiserver_flowcontrol_read_vs_write_current_requests (nil without
// metrics).
func (m *Metrics) RequestKindObserver(waiting bool) func(mutating bool, n int64) {
	if m == nil {
		return nil
	}
	ro, mut := m.execRO, m.execMut
	if waiting {
		ro, mut = m.waitingRO, m.waitingMut
	}
	return func(mutating bool, n int64) {
		if mutating {
			mut.set(float64(n))
		} else {
			ro.set(float64(n))
		}
	}
}

// setKindDenominators sets the read_vs_write denominators after a
// configuration is digested: the queues' capacity (queues times their
// length limit, over the queuing levels) and the nominal seats' sum.
func (m *Metrics) setKindDenominators(maxWaiting, maxExecuting int) {
	if m == nil {
		return
	}
	// The engine starts on the mandatory levels alone, which do not
	// queue: 0 would make the ratio 0/0, and NaN the series' sum for
	// good. Upstream's first digest happens before the family is
	// registered, so its NaN is lost; here a configuration without
	// queues keeps the previous denominator.
	if maxWaiting > 0 {
		m.waitingRO.setDenominator(float64(maxWaiting))
		m.waitingMut.setDenominator(float64(maxWaiting))
	}
	m.execRO.setDenominator(float64(maxExecuting))
	m.execMut.setDenominator(float64(maxExecuting))
}

// NewMaxInFlightMetrics registers on reg what kube-apiserver serves of
// the apiserver_flowcontrol_* families with API Priority and Fairness
// off: seat_fair_frac (0: no adjustment runs) and the two executing
// series of read_vs_write_current_requests, over the max-in-flight
// limits (a kind whose limit is 0 keeps denominator 1 and is never
// counted), and returns what to tell of the filter's counts.
func NewMaxInFlightMetrics(reg prometheus.Registerer, nonMutating, mutating int) (func(mutating bool, n int64), error) {
	rw := newReadWriteVec()
	ro, mut := rw.with(0, 1, "executing", "readOnly"), rw.with(0, 1, "executing", "mutating")
	if nonMutating != 0 {
		ro.setDenominator(float64(nonMutating))
	}
	if mutating != 0 {
		mut.setDenominator(float64(mutating))
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{newFairFrac(), rw} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return func(isMutating bool, n int64) {
		if isMutating {
			mut.set(float64(n))
		} else {
			ro.set(float64(n))
		}
	}, nil
}

func newReadWriteVec() *timingRatioVec {
	return newTimingRatioVec("apiserver_flowcontrol_read_vs_write_current_requests",
		"[ALPHA] Observations, at the end of every nanosecond, of the number of requests (as a fraction of the relevant limit) waiting or in regular stage of execution",
		[]float64{0, 0.001, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1}, nil, "phase", "request_kind")
}

func newFairFrac() prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_seat_fair_frac",
		Help: "[ALPHA] Fair fraction of server's concurrency to allocate to each priority level that can use it"})
}
