package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The code_path values of apiserver_request_timestamp_comparison_time:
// how an update's comparison of the new object with the stored one ended
// (upstream's fieldmanager.IgnoreManagedFieldsTimestampsTransformer).
const (
	// TimestampsUnequalFast: managed fields entries added or removed,
	// none, no time changed, or the entries differ beyond their times.
	TimestampsUnequalFast = "unequal_objects_fast"
	// TimestampsUnequalSlow: the entries differ only in times, the
	// objects in more.
	TimestampsUnequalSlow = "unequal_objects_slow"
	// TimestampsEqual: only times differ; they were put back.
	TimestampsEqual = "equal_objects"
	// TimestampsError: the objects have no metadata.
	TimestampsError = "error"
)

var timestampOutcomes = [...]string{TimestampsUnequalFast, TimestampsUnequalSlow, TimestampsEqual, TimestampsError}

// timestampComparisonBuckets are upstream's.
var timestampComparisonBuckets = []float64{0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 5.0}

// timestampComparisons is apiserver_request_timestamp_comparison_time,
// with each code path's child resolved on first use.
type timestampComparisons struct {
	vec  *prometheus.HistogramVec
	once [len(timestampOutcomes)]sync.Once
	obs  [len(timestampOutcomes)]prometheus.Observer
}

func newTimestampComparisons() *timestampComparisons {
	return &timestampComparisons{vec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_timestamp_comparison_time",
		Help:    "[ALPHA] Time taken for comparison of old vs new objects in UPDATE or PATCH requests",
		Buckets: timestampComparisonBuckets,
	}, []string{"code_path"})}
}

// TimestampComparison records how long an update's comparison of managed
// fields timestamps took and how it ended (one of the Timestamps*
// outcomes). Its method value is what storage is handed to record with
// (rest.WithTimestampComparisons).
func (m *Metrics) TimestampComparison(outcome string, d time.Duration) {
	if m == nil {
		return
	}
	t := m.timestamps
	for i, o := range timestampOutcomes {
		if o == outcome {
			t.once[i].Do(func() { t.obs[i] = t.vec.WithLabelValues(o) })
			t.obs[i].Observe(d.Seconds())
			return
		}
	}
	t.vec.WithLabelValues(outcome).Observe(d.Seconds())
}
