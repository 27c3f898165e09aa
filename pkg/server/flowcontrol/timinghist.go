package flowcontrol

import (
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// A timing ratio histogram is upstream's TimingRatioHistogram
// (k8s.io/apiserver/pkg/util/flowcontrol/metrics over component-base's
// timing histogram), written anew: a gauge numerator/denominator whose
// exposition is a histogram of how long, in nanoseconds, the ratio spent
// in each bucket (each bucket's count is the time the ratio was at or
// under its bound, the sum is the integral of the ratio over nanoseconds).
// The time since the last change is accounted when the value changes and
// when it is scraped.
type timingRatioVec struct {
	desc   *prometheus.Desc
	bounds []float64
	now    func() time.Time

	mu       sync.Mutex
	children map[string]*timingRatio
}

func newTimingRatioVec(name, help string, bounds []float64, constLabels prometheus.Labels, labels ...string) *timingRatioVec {
	return &timingRatioVec{
		desc:     prometheus.NewDesc(name, "EXPERIMENTAL: "+help, labels, constLabels),
		bounds:   bounds,
		now:      time.Now,
		children: map[string]*timingRatio{},
	}
}

// with returns the series of labelValues, made (numerator, denominator)
// if new (as upstream's NewForLabelValuesSafe, which sets the ratio of an
// existing one).
func (v *timingRatioVec) with(numerator, denominator float64, labelValues ...string) *timingRatio {
	key := ""
	for _, l := range labelValues {
		key += l + "\x00"
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c := v.children[key]; c != nil {
		c.setRatio(numerator, denominator)
		return c
	}
	c := &timingRatio{vec: v, labels: labelValues, buckets: make([]uint64, len(v.bounds)+1),
		num: numerator, den: denominator, value: numerator / denominator, last: v.now()}
	v.children[key] = c
	return c
}

func (v *timingRatioVec) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

func (v *timingRatioVec) Collect(ch chan<- prometheus.Metric) {
	v.mu.Lock()
	children := make([]*timingRatio, 0, len(v.children))
	for _, c := range v.children {
		children = append(children, c)
	}
	v.mu.Unlock()
	for _, c := range children {
		ch <- c
	}
}

// timingRatio is one series. A nil *timingRatio records nothing.
type timingRatio struct {
	vec    *timingRatioVec
	labels []string

	mu       sync.Mutex
	buckets  []uint64 // nanoseconds per bucket, not cumulative; the last is +Inf
	sum      float64
	num, den float64
	value    float64
	last     time.Time
}

// accountLocked adds the time since the last change at the current value.
func (t *timingRatio) accountLocked() { t.accountAtLocked(t.vec.now()) }

func (t *timingRatio) accountAtLocked(now time.Time) {
	d := now.Sub(t.last)
	if d <= 0 {
		return
	}
	t.buckets[sort.SearchFloat64s(t.vec.bounds, t.value)] += uint64(d)
	t.sum += float64(d) * t.value
	t.last = now
}

func (t *timingRatio) setRatio(numerator, denominator float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.accountLocked()
	t.num, t.den = numerator, denominator
	t.value = numerator / denominator
}

// set sets the numerator.
func (t *timingRatio) set(numerator float64) {
	if t == nil {
		return
	}
	t.setAt(numerator, t.vec.now())
}

// setAt sets the numerator at now (a caller updating several series
// reads the clock once); an unchanged numerator changes nothing (the
// time it has held is accounted at the next change or scrape).
func (t *timingRatio) setAt(numerator float64, now time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if numerator == t.num {
		return
	}
	t.accountAtLocked(now)
	t.num = numerator
	t.value = numerator / t.den
}

// setDenominator sets the denominator.
func (t *timingRatio) setDenominator(denominator float64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.accountLocked()
	t.den = denominator
	t.value = t.num / denominator
}

func (t *timingRatio) Desc() *prometheus.Desc { return t.vec.desc }

func (t *timingRatio) Write(out *dto.Metric) error {
	t.mu.Lock()
	t.accountLocked()
	cumulative := make(map[float64]uint64, len(t.vec.bounds))
	var count uint64
	for i, b := range t.vec.bounds {
		count += t.buckets[i]
		cumulative[b] = count
	}
	count += t.buckets[len(t.vec.bounds)]
	sum := t.sum
	t.mu.Unlock()
	h, err := prometheus.NewConstHistogram(t.vec.desc, count, sum, cumulative, t.labels...)
	if err != nil {
		return err
	}
	return h.Write(out)
}
