package apf

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// gauge is the value of name's series with labels want (false: none).
func gauge(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		if labelsMatch(m, want) {
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// The borrowing adjustment's statistics (upstream's
// NotePriorityLevelConfigurationAdjustment and SetFairFrac): each
// priority level's seat demand high watermark, average, standard
// deviation, smoothed demand and target, and the fair fraction, published
// at start and at every adjustment; the demand of a level's traffic shows
// in its statistics in the next adjustment.
func TestSeatDemandStatistics(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) { o.APFAdjustmentPeriod = 200 * time.Millisecond }))
	ids := newIdentities(t, srv)
	levels := []string{"catch-all", "exempt", "global-default", "leader-election", "node-high", "system", "workload-high", "workload-low"}
	fams := ids.metrics(t)
	for _, name := range []string{"apiserver_flowcontrol_demand_seats_high_watermark", "apiserver_flowcontrol_demand_seats_average",
		"apiserver_flowcontrol_demand_seats_stdev", "apiserver_flowcontrol_demand_seats_smoothed", "apiserver_flowcontrol_target_seats"} {
		for _, pl := range levels {
			if _, ok := gauge(fams, name, map[string]string{"priority_level": pl}); !ok {
				t.Errorf("%s{priority_level=%q}: missing", name, pl)
			}
		}
		if n := len(fams[name].GetMetric()); n != len(levels) {
			t.Errorf("%s: %d series, want %d", name, n, len(levels))
		}
	}
	// The default configuration on 600 seats: upstream's fair fraction
	// (the nominal limits' sum, 602, over the lower bounds' sum, 258).
	if f, ok := gauge(fams, "apiserver_flowcontrol_seat_fair_frac", nil); !ok || f < 2.3 || f > 2.4 {
		t.Errorf("seat_fair_frac %v (present %v), want about 2.33 on an idle server", f, ok)
	}
	gd := map[string]string{"priority_level": "global-default"}
	if v, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_smoothed", gd); v != 0 {
		t.Errorf("global-default smoothed demand %v before any traffic, want 0", v)
	}

	// Traffic on global-default (an authenticated user): 8 clients at a
	// time until an adjustment has seen it.
	alice := ids.as(t, "alice", "system:authenticated")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if code, _, _, err := alice.get(ctx, "/api/v1/namespaces/default/configmaps"); err == nil && code != http.StatusOK {
					t.Errorf("list: %d", code)
					return
				}
			}
		}()
	}
	eventually(t, 30*time.Second, "global-default's demand in its statistics", func() error {
		fams := ids.metrics(t)
		hwm, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_high_watermark", gd)
		avg, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_average", gd)
		sm, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_smoothed", gd)
		if hwm < 1 || avg <= 0 || sm <= 0 {
			return errorf("high watermark %v, average %v, smoothed %v", hwm, avg, sm)
		}
		if hwm > 8 || avg > hwm {
			return errorf("high watermark %v and average %v, with at most 8 requests at a time", hwm, avg)
		}
		return nil
	})
	cancel()
	wg.Wait()
	// Idle again: the high watermark falls to 0 within two periods; the
	// smoothed demand decays slowly (upstream's 0.977 per period).
	eventually(t, 30*time.Second, "global-default idle", func() error {
		fams := ids.metrics(t)
		hwm, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_high_watermark", gd)
		avg, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_average", gd)
		sm, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_smoothed", gd)
		if hwm != 0 || avg != 0 || sm <= 0 {
			return errorf("high watermark %v, average %v, smoothed %v; want 0, 0, > 0", hwm, avg, sm)
		}
		return nil
	})
}

// histogramOf is the histogram of name's series with labels want.
func histogramOf(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Histogram {
	for _, m := range fams[name].GetMetric() {
		if labelsMatch(m, want) {
			return m.GetHistogram()
		}
	}
	return nil
}

// Upstream's timing ratio histograms of each priority level (seats in
// use, requests waiting and executing, seat demand, each over its limit):
// a series per level from the start, whose count grows with the time in
// nanoseconds and whose sum grows only while the level has work.
func TestPriorityLevelUtilizationHistograms(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) { o.APFAdjustmentPeriod = 200 * time.Millisecond }))
	ids := newIdentities(t, srv)
	levels := []string{"catch-all", "exempt", "global-default", "leader-election", "node-high", "system", "workload-high", "workload-low"}
	type family struct {
		name    string
		labels  func(pl string) []map[string]string
		buckets []float64
	}
	families := []family{
		{"apiserver_flowcontrol_priority_level_seat_utilization", func(pl string) []map[string]string {
			return []map[string]string{{"phase": "executing", "priority_level": pl}}
		}, []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1}},
		{"apiserver_flowcontrol_priority_level_request_utilization", func(pl string) []map[string]string {
			return []map[string]string{{"phase": "executing", "priority_level": pl}, {"phase": "waiting", "priority_level": pl}}
		}, []float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 1}},
		{"apiserver_flowcontrol_demand_seats", func(pl string) []map[string]string {
			return []map[string]string{{"priority_level": pl}}
		}, []float64{0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6}},
	}
	gd := map[string]string{"priority_level": "global-default"}
	before := ids.metrics(t)
	for _, f := range families {
		mf := before[f.name]
		if mf.GetType() != dto.MetricType_HISTOGRAM || !strings.HasPrefix(mf.GetHelp(), "EXPERIMENTAL: [ALPHA] ") {
			t.Errorf("%s: type %v help %q", f.name, mf.GetType(), mf.GetHelp())
		}
		n := 0
		for _, pl := range levels {
			for _, want := range f.labels(pl) {
				n++
				h := histogramOf(before, f.name, want)
				if h == nil {
					t.Errorf("%s%v: missing", f.name, want)
					continue
				}
				var bounds []float64
				for _, b := range h.GetBucket() {
					if !math.IsInf(b.GetUpperBound(), 1) {
						bounds = append(bounds, b.GetUpperBound())
					}
				}
				if !slices.Equal(bounds, f.buckets) {
					t.Errorf("%s: buckets %v, want %v", f.name, bounds, f.buckets)
				}
			}
		}
		if got := len(mf.GetMetric()); got != n {
			t.Errorf("%s: %d series, want %d", f.name, got, n)
		}
	}
	seatsBefore := histogramOf(before, "apiserver_flowcontrol_priority_level_seat_utilization", gd)
	demandBefore := histogramOf(before, "apiserver_flowcontrol_demand_seats", gd)
	if seatsBefore.GetSampleSum() != 0 || demandBefore.GetSampleSum() != 0 {
		t.Errorf("global-default before any traffic: seat utilization sum %v, demand sum %v; want 0",
			seatsBefore.GetSampleSum(), demandBefore.GetSampleSum())
	}

	alice := ids.as(t, "alice", "system:authenticated")
	for range 50 {
		if code, _, _, err := alice.get(context.Background(), "/api/v1/namespaces/default/configmaps"); err != nil || code != http.StatusOK {
			t.Fatalf("list: %d %v", code, err)
		}
	}
	after := ids.metrics(t)
	for _, name := range []string{"apiserver_flowcontrol_priority_level_seat_utilization", "apiserver_flowcontrol_demand_seats"} {
		b, a := histogramOf(before, name, gd), histogramOf(after, name, gd)
		if a.GetSampleCount() <= b.GetSampleCount() || a.GetSampleSum() <= 0 {
			t.Errorf("%s{global-default} after 50 lists: count %d -> %d, sum %v; want the count to grow and the sum > 0",
				name, b.GetSampleCount(), a.GetSampleCount(), a.GetSampleSum())
		}
		// Every nanosecond is in the +Inf bucket: the count is the time
		// since the series was made, which is more than the test's.
		if a.GetSampleCount() < uint64(time.Millisecond) {
			t.Errorf("%s: count %d ns", name, a.GetSampleCount())
		}
	}
	ex := histogramOf(after, "apiserver_flowcontrol_priority_level_request_utilization", map[string]string{"phase": "executing", "priority_level": "global-default"})
	if ex.GetSampleSum() <= 0 {
		t.Errorf("global-default executing requests' utilization sum %v after 50 lists, want > 0", ex.GetSampleSum())
	}
}

// apiserver_flowcontrol_read_vs_write_current_requests: the requests
// waiting and executing by kind over the queues' capacity and the nominal
// seats, four series from the start; the sum of a kind's executing series
// grows with requests of that kind.
func TestReadVsWriteCurrentRequests(t *testing.T) {
	srv := kapitest.Start(t)
	ids := newIdentities(t, srv)
	const name = "apiserver_flowcontrol_read_vs_write_current_requests"
	buckets := []float64{0, 0.001, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1}
	before := ids.metrics(t)
	if mf := before[name]; mf.GetType() != dto.MetricType_HISTOGRAM || len(mf.GetMetric()) != 4 ||
		mf.GetHelp() != "EXPERIMENTAL: [ALPHA] Observations, at the end of every nanosecond, of the number of requests (as a fraction of the relevant limit) waiting or in regular stage of execution" {
		t.Fatalf("%s: %v", name, mf)
	}
	series := func(fams map[string]*dto.MetricFamily, phase, kind string) *dto.Histogram {
		h := histogramOf(fams, name, map[string]string{"phase": phase, "request_kind": kind})
		if h == nil {
			t.Fatalf("%s{phase=%q,request_kind=%q}: missing", name, phase, kind)
		}
		return h
	}
	for _, phase := range []string{"waiting", "executing"} {
		for _, kind := range []string{"readOnly", "mutating"} {
			var bounds []float64
			for _, b := range series(before, phase, kind).GetBucket() {
				if !math.IsInf(b.GetUpperBound(), 1) {
					bounds = append(bounds, b.GetUpperBound())
				}
			}
			if !slices.Equal(bounds, buckets) {
				t.Errorf("%s{%s,%s}: buckets %v", name, phase, kind, bounds)
			}
		}
	}
	alice := ids.as(t, "alice", "system:authenticated")
	for range 30 {
		if code, _, _, err := alice.get(context.Background(), "/api/v1/namespaces/default/configmaps"); err != nil || code != http.StatusOK {
			t.Fatalf("list: %d %v", code, err)
		}
	}
	mid := ids.metrics(t)
	if b, a := series(before, "executing", "readOnly").GetSampleSum(), series(mid, "executing", "readOnly").GetSampleSum(); a <= b {
		t.Errorf("executing readOnly sum %v -> %v after 30 lists, want growth", b, a)
	}
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	for i := range 10 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("rw-", i)}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	after := ids.metrics(t)
	if b, a := series(mid, "executing", "mutating").GetSampleSum(), series(after, "executing", "mutating").GetSampleSum(); a <= b {
		t.Errorf("executing mutating sum %v -> %v after 10 creates, want growth", b, a)
	}
	// No series' sum is NaN: the engine's first, mandatory-only
	// configuration has no queues, and 0/0 must not be accounted.
	for _, phase := range []string{"waiting", "executing"} {
		for _, kind := range []string{"readOnly", "mutating"} {
			if v := series(after, phase, kind).GetSampleSum(); math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s{%s,%s} sum %v", name, phase, kind, v)
			}
		}
	}
}

// apiserver_flowcontrol_watch_count_samples: each mutation samples the
// watches it notifies, under its flow's labels, as upstream's work
// estimator; apiserver_flowcontrol_work_estimated_seats, with upstream's
// buckets, counts every estimate.
func TestWatchCountSamples(t *testing.T) {
	srv := kapitest.Start(t)
	ids := newIdentities(t, srv)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gd := map[string]string{"priority_level": "global-default", "flow_schema": "global-default"}
	if _, n := histogram(ids.metrics(t), "apiserver_flowcontrol_watch_count_samples", gd); n != 0 {
		t.Errorf("watch_count_samples{global-default} before any mutation: %d samples", n)
	}
	alice := ids.as(t, "alice", "system:authenticated")
	// One create with the server's own watches of configmaps only, then
	// three with two watches more.
	if code, err := alice.post(ctx, "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"wc-first"}}`); err != nil || code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, err)
	}
	base := histogramOf(ids.metrics(t), "apiserver_flowcontrol_watch_count_samples", gd).GetSampleSum()
	for range 2 {
		w, err := cs.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}
	for i := range 3 {
		if code, err := alice.post(ctx, "/api/v1/namespaces/default/configmaps", fmt.Sprintf(`{"metadata":{"name":"wc-%d"}}`, i)); err != nil || code != http.StatusCreated {
			t.Fatalf("create: %d %v", code, err)
		}
	}
	fams := ids.metrics(t)
	mf := fams["apiserver_flowcontrol_watch_count_samples"]
	if mf.GetHelp() != "[ALPHA] count of watchers for mutating requests in API Priority and Fairness" {
		t.Errorf("help %q", mf.GetHelp())
	}
	_, count := histogram(fams, "apiserver_flowcontrol_watch_count_samples", gd)
	h := histogramOf(fams, "apiserver_flowcontrol_watch_count_samples", gd)
	if count != 4 || h.GetSampleSum() != base+3*(base+2) {
		t.Errorf("watch_count_samples{global-default}: %d samples summing to %v; want 4, %v (%v watches, then 2 more)",
			count, h.GetSampleSum(), base+3*(base+2), base)
	}
	seats, n := histogram(fams, "apiserver_flowcontrol_work_estimated_seats", gd)
	var bounds []float64
	for b := range seats {
		if !math.IsInf(b, 1) {
			bounds = append(bounds, b)
		}
	}
	slices.Sort(bounds)
	if !slices.Equal(bounds, []float64{1, 2, 4, 8, 16, 32, 64, 100}) || n < 3 || seats[1] != n {
		t.Errorf("work_estimated_seats{global-default}: %d estimates, buckets %v", n, seats)
	}
}

// post does POST path with a JSON body as the user and returns the status.
func (u *userClient) post(ctx context.Context, path, body string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.host+path, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Remote-User", u.user)
	for _, g := range u.groups {
		req.Header.Add("X-Remote-Group", g)
	}
	res, err := u.client.Do(req)
	if err != nil {
		return 0, err
	}
	_ = res.Body.Close()
	return res.StatusCode, nil
}

// The per-flow series appear when upstream records them: exempt requests
// never queue and are never timed in a queue; a limited level's request
// passes through its queue (request_queue_length_after_enqueue, the
// in-queue gauges at 0, its wait timed) even when dispatched at once; a
// watch's initial stage is timed as type="watch"; a schema nobody used
// has no series.
func TestFlowSeriesAsUpstream(t *testing.T) {
	srv := kapitest.Start(t)
	ids := newIdentities(t, srv)
	alice := ids.as(t, "alice", "system:authenticated")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 3 {
		if code, _, _, err := alice.get(ctx, "/api/v1/namespaces/default/configmaps"); err != nil || code != http.StatusOK {
			t.Fatalf("list: %d %v", code, err)
		}
	}
	if code, _, _, err := alice.get(ctx, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1"); err != nil || code != http.StatusOK {
		t.Fatalf("watch: %d %v", code, err)
	}
	fams := ids.metrics(t)
	gd := map[string]string{"priority_level": "global-default", "flow_schema": "global-default"}
	if _, n := histogram(fams, "apiserver_flowcontrol_request_queue_length_after_enqueue", gd); n < 4 {
		t.Errorf("request_queue_length_after_enqueue{global-default}: %d samples, want one per request (4)", n)
	}
	if v, ok := gauge(fams, "apiserver_flowcontrol_current_inqueue_requests", gd); !ok || v != 0 {
		t.Errorf("current_inqueue_requests{global-default}: %v (present %v), want 0", v, ok)
	}
	if _, n := histogram(fams, "apiserver_flowcontrol_request_wait_duration_seconds", map[string]string{"priority_level": "global-default", "execute": "true"}); n < 4 {
		t.Errorf("request_wait_duration_seconds{global-default,execute=true}: %d samples, want 4", n)
	}
	if _, n := histogram(fams, "apiserver_flowcontrol_request_execution_seconds", map[string]string{"priority_level": "global-default", "type": "watch"}); n != 1 {
		t.Errorf("request_execution_seconds{global-default,type=watch}: %d samples, want 1", n)
	}
	// The admin (system:masters) is exempt: dispatched, never queued.
	if counterSum(fams, "apiserver_flowcontrol_dispatched_requests_total", map[string]string{"priority_level": "exempt"}) == 0 {
		t.Errorf("no exempt dispatches counted")
	}
	for _, name := range []string{"apiserver_flowcontrol_current_inqueue_requests", "apiserver_flowcontrol_current_inqueue_seats",
		"apiserver_flowcontrol_request_wait_duration_seconds", "apiserver_flowcontrol_request_queue_length_after_enqueue"} {
		for _, m := range fams[name].GetMetric() {
			if labelsMatch(m, map[string]string{"priority_level": "exempt"}) {
				t.Errorf("%s has an exempt series: %v", name, m.GetLabel())
			}
		}
	}
	for _, name := range []string{"apiserver_flowcontrol_dispatched_requests_total", "apiserver_flowcontrol_current_executing_requests",
		"apiserver_flowcontrol_current_inqueue_requests"} {
		for _, m := range fams[name].GetMetric() {
			if labelsMatch(m, map[string]string{"flow_schema": "system-leader-election"}) {
				t.Errorf("%s has a series for a schema nobody used: %v", name, m.GetLabel())
			}
		}
	}
}

// With API Priority and Fairness off, kube-apiserver v1.37.2 serves of
// its families only seat_fair_frac (0) and the executing pair of
// read_vs_write_current_requests, which its max-in-flight filter fills
// (the reference's /metrics after the session's traffic).
func TestMaxInFlightFlowcontrolFamilies(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithFlags("--enable-priority-and-fairness=false"))
	ids := newIdentities(t, srv)
	alice := ids.as(t, "alice", "system:authenticated")
	for range 20 {
		if code, _, _, err := alice.get(context.Background(), "/api/v1/namespaces/default/configmaps"); err != nil || code != http.StatusOK {
			t.Fatalf("list: %d %v", code, err)
		}
	}
	fams := ids.metrics(t)
	var names []string
	for name := range fams {
		if strings.HasPrefix(name, "apiserver_flowcontrol_") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if want := []string{"apiserver_flowcontrol_read_vs_write_current_requests", "apiserver_flowcontrol_seat_fair_frac"}; !slices.Equal(names, want) {
		t.Errorf("flowcontrol families %v, want %v", names, want)
	}
	if v, ok := gauge(fams, "apiserver_flowcontrol_seat_fair_frac", nil); !ok || v != 0 {
		t.Errorf("seat_fair_frac %v (present %v), want 0", v, ok)
	}
	rw := fams["apiserver_flowcontrol_read_vs_write_current_requests"]
	if n := len(rw.GetMetric()); n != 2 {
		t.Errorf("read_vs_write_current_requests: %d series, want the executing pair", n)
	}
	if h := histogramOf(fams, "apiserver_flowcontrol_read_vs_write_current_requests", map[string]string{"phase": "executing", "request_kind": "readOnly"}); h.GetSampleSum() <= 0 {
		t.Errorf("executing readOnly sum %v after 20 lists, want > 0", h.GetSampleSum())
	}
}
