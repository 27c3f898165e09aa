// Package metricsfilter applies component-base's --disabled-metrics and
// --allow-metric-labels (k8s.io/component-base v0.37 metrics) to what a
// server's /metrics serves, and provides the three meta families
// kube-apiserver serves with them whatever the flags:
// disabled_metrics_total, hidden_metrics_total and
// cardinality_enforcement_unexpected_categorizations_total.
//
// Upstream applies both when a metric is made: a disabled family is never
// registered, a label value outside its allow-list is recorded as
// "unexpected". kapi registers its families with client_golang directly,
// so the filter applies both to what the registry gathers: disabled
// families are left out, and the series whose values become "unexpected"
// are merged into one (counters, histogram buckets, counts and sums and
// gauges added up; a summary keeps the first series' quantiles).
//
// As upstream, the families component-base does not make are exempt:
// the Go runtime's and the process's (registered raw) and those of
// custom collectors (apiserver_storage_size_bytes, the configuration
// info families).
package metricsfilter

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// Unexpected is the value a label outside its allow-list is served with.
const Unexpected = "unexpected"

const (
	unexpectedName = "cardinality_enforcement_unexpected_categorizations_total"
	hiddenName     = "hidden_metrics_total"
)

// Config is what to filter.
type Config struct {
	// Disabled are the names of families not to serve (component-base's
	// --disabled-metrics).
	Disabled []string
	// AllowLists maps "metricName,labelName" to the comma-separated
	// values that label may have (--allow-metric-labels).
	AllowLists map[string]string
	// Hidden are the deprecated families the server hides (none with
	// --show-hidden-metrics-for-version): upstream registers them at
	// start and counts each in hidden_metrics_total.
	Hidden []string
	// Deprecated are the deprecated families upstream registers at start
	// whether hidden or not: a disabled one counts in hidden_metrics_total
	// from the start, as its registration does upstream.
	Deprecated []string
}

// Filter is a prometheus.Gatherer serving a registry's families through
// Config. Safe for concurrent use.
type Filter struct {
	g        prometheus.Gatherer
	disabled map[string]bool
	allow    map[string]map[string]map[string]bool // family -> label -> allowed values

	unexpected prometheus.Counter // cardinality_enforcement_unexpected_categorizations_total
	hidden     prometheus.Counter // hidden_metrics_total
	mu         sync.Mutex
	seen       map[string]bool // the series (family and labels) made "unexpected" so far
	hiddenSeen map[string]bool // the families counted in hidden_metrics_total
}

// New returns the filter of g's families and registers the meta families
// on reg: disabled_metrics_total (the number of distinct names disabled,
// whether such a family exists or not, as upstream counts them),
// hidden_metrics_total and
// cardinality_enforcement_unexpected_categorizations_total.
//
// Upstream's component-base counts in hidden_metrics_total each family
// it does not register because it is hidden (deprecated, not shown) or
// disabled, when the family is registered: the hidden ones and the
// disabled deprecated ones at start; kapi counts a disabled family when
// it is first gathered (when it first has a series: a family without
// series is not registered as far as the filter can tell). Upstream
// counts in the latter each recording of a value made "unexpected"; kapi,
// which applies the allow-lists when gathering, counts each series whose
// value was made "unexpected", once.
func New(g prometheus.Gatherer, reg prometheus.Registerer, cfg Config) (*Filter, error) {
	f := &Filter{
		g:          g,
		disabled:   map[string]bool{},
		allow:      map[string]map[string]map[string]bool{},
		seen:       map[string]bool{},
		hiddenSeen: map[string]bool{},
		hidden: prometheus.NewCounter(prometheus.CounterOpts{
			Name: hiddenName,
			Help: "[BETA] The count of hidden metrics.",
		}),
		unexpected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: unexpectedName,
			Help: "[ALPHA] The count of unexpected categorizations during cardinality enforcement.",
		}),
	}
	disabledTotal := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "disabled_metrics_total",
		Help: "[BETA] The count of disabled metrics.",
	})
	for _, name := range cfg.Disabled {
		if name != "" && !f.disabled[name] {
			f.disabled[name] = true
			disabledTotal.Inc()
		}
	}
	for key, values := range cfg.AllowLists {
		family, label, ok := strings.Cut(key, ",")
		if !ok {
			continue // refused by the options' validation
		}
		if f.allow[family] == nil {
			f.allow[family] = map[string]map[string]bool{}
		}
		set := map[string]bool{}
		for v := range strings.SplitSeq(values, ",") {
			set[v] = true
		}
		f.allow[family][label] = set
	}
	for _, name := range cfg.Hidden {
		f.countHidden(name)
	}
	for _, name := range cfg.Deprecated {
		if f.disabled[name] {
			f.countHidden(name)
		}
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{disabledTotal, f.hidden, f.unexpected} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// exempt reports whether family is one component-base does not make, to
// which neither flag applies.
func exempt(family string) bool {
	return strings.HasPrefix(family, "go_") || strings.HasPrefix(family, "process_") ||
		family == "apiserver_storage_size_bytes" ||
		strings.HasSuffix(family, "_last_config_info") || strings.HasSuffix(family, "_last_key_set_info")
}

// Gather implements prometheus.Gatherer.
func (f *Filter) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := f.g.Gather()
	if len(f.disabled) == 0 && len(f.allow) == 0 {
		return mfs, err
	}
	out := mfs[:0]
	for _, mf := range mfs {
		name := mf.GetName()
		if exempt(name) {
			out = append(out, mf)
			continue
		}
		if f.disabled[name] {
			f.countHidden(name)
			continue
		}
		if lists := f.allow[name]; lists != nil {
			mf = f.constrain(mf, lists)
		}
		out = append(out, mf)
	}
	// The registry gathered the counters before this gathering's series
	// and families were counted.
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, mf := range out {
		if len(mf.GetMetric()) != 1 || mf.GetMetric()[0].Counter == nil {
			continue
		}
		switch mf.GetName() {
		case unexpectedName:
			mf.GetMetric()[0].Counter.Value = proto.Float64(float64(len(f.seen)))
		case hiddenName:
			mf.GetMetric()[0].Counter.Value = proto.Float64(float64(len(f.hiddenSeen)))
		}
	}
	return out, err
}

// countHidden counts family in hidden_metrics_total the first time.
func (f *Filter) countHidden(family string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.hiddenSeen[family] {
		f.hiddenSeen[family] = true
		f.hidden.Inc()
	}
}

// constrain returns mf with the label values outside lists made
// "unexpected" and the series that then have the same labels merged.
func (f *Filter) constrain(mf *dto.MetricFamily, lists map[string]map[string]bool) *dto.MetricFamily {
	var changed bool
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if set, ok := lists[l.GetName()]; ok && !set[l.GetValue()] {
				changed = true
			}
		}
	}
	if !changed {
		return mf
	}
	merged := map[string]*dto.Metric{}
	var order []string
	for _, m := range mf.GetMetric() {
		var replaced bool
		labels := make([]*dto.LabelPair, 0, len(m.GetLabel()))
		for _, l := range m.GetLabel() {
			if set, ok := lists[l.GetName()]; ok && !set[l.GetValue()] {
				labels = append(labels, &dto.LabelPair{Name: proto.String(l.GetName()), Value: proto.String(Unexpected)})
				replaced = true
				continue
			}
			labels = append(labels, l)
		}
		if replaced {
			f.count(mf.GetName(), m.GetLabel())
		}
		key := labelKey(labels)
		into, ok := merged[key]
		if !ok {
			c := proto.Clone(m).(*dto.Metric)
			c.Label = labels
			merged[key] = c
			order = append(order, key)
			continue
		}
		add(into, m)
	}
	out := &dto.MetricFamily{Name: mf.Name, Help: mf.Help, Type: mf.Type, Unit: mf.Unit}
	for _, k := range order {
		out.Metric = append(out.Metric, merged[k])
	}
	// Sorted by labels, as the registry sorts the series it gathers.
	sort.SliceStable(out.Metric, func(i, j int) bool {
		return labelKey(out.Metric[i].GetLabel()) < labelKey(out.Metric[j].GetLabel())
	})
	return out
}

// count counts series (family, labels) made "unexpected" the first time.
func (f *Filter) count(family string, labels []*dto.LabelPair) {
	key := family + "{" + labelKey(labels)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.seen[key] {
		f.seen[key] = true
		f.unexpected.Inc()
	}
}

func labelKey(labels []*dto.LabelPair) string {
	var b strings.Builder
	for _, l := range labels {
		b.WriteString(l.GetName())
		b.WriteByte(0)
		b.WriteString(l.GetValue())
		b.WriteByte(0)
	}
	return b.String()
}

// add adds m's values to into's (series of one family).
func add(into, m *dto.Metric) {
	switch {
	case into.Counter != nil && m.Counter != nil:
		into.Counter.Value = proto.Float64(into.Counter.GetValue() + m.Counter.GetValue())
		into.Counter.Exemplar = nil
	case into.Gauge != nil && m.Gauge != nil:
		into.Gauge.Value = proto.Float64(into.Gauge.GetValue() + m.Gauge.GetValue())
	case into.Untyped != nil && m.Untyped != nil:
		into.Untyped.Value = proto.Float64(into.Untyped.GetValue() + m.Untyped.GetValue())
	case into.Histogram != nil && m.Histogram != nil:
		h, o := into.Histogram, m.Histogram
		h.SampleCount = proto.Uint64(h.GetSampleCount() + o.GetSampleCount())
		h.SampleSum = proto.Float64(h.GetSampleSum() + o.GetSampleSum())
		for _, b := range h.Bucket {
			i := slices.IndexFunc(o.Bucket, func(ob *dto.Bucket) bool { return ob.GetUpperBound() == b.GetUpperBound() })
			if i >= 0 {
				b.CumulativeCount = proto.Uint64(b.GetCumulativeCount() + o.Bucket[i].GetCumulativeCount())
			}
			b.Exemplar = nil
		}
	case into.Summary != nil && m.Summary != nil:
		into.Summary.SampleCount = proto.Uint64(into.Summary.GetSampleCount() + m.Summary.GetSampleCount())
		into.Summary.SampleSum = proto.Float64(into.Summary.GetSampleSum() + m.Summary.GetSampleSum())
	}
}
