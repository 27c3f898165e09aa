package metrics

import (
	"net/url"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// fieldValidationBuckets are field_validation_request_duration_seconds'
// (upstream's, the SLI latency's).
var fieldValidationBuckets = []float64{0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
	4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// The values of the field_validation label: a request's fieldValidation
// parameter when valid, or "invalid".
var fieldValidationValues = [...]string{"", "Ignore", "Warn", "Strict", "invalid"}

const fieldValidationInvalid = len(fieldValidationValues) - 1

// fieldValidations is field_validation_request_duration_seconds. Upstream
// (k8s.io/apiserver v1.37.2 MonitorRequest) resolves the series of each
// recorded request's field_validation value but never observes it: the
// family lists one empty histogram per value seen. kapi does the same,
// resolving each value's series once.
type fieldValidations struct {
	vec  *prometheus.HistogramVec
	once [len(fieldValidationValues)]sync.Once
}

func newFieldValidations() *fieldValidations {
	return &fieldValidations{vec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "field_validation_request_duration_seconds",
		Help:    "[ALPHA] Response latency distribution in seconds for each field validation value",
		Buckets: fieldValidationBuckets,
	}, []string{"field_validation"})}
}

// seen makes the series of u's field_validation value exist.
func (f *fieldValidations) seen(u *url.URL) {
	i := fieldValidationIndex(u)
	f.once[i].Do(func() { f.vec.WithLabelValues(fieldValidationValues[i]) })
}

// fieldValidationIndex is the index in fieldValidationValues of u's
// field_validation value, as upstream's cleanFieldValidation: "" when the
// raw query does not mention fieldValidation; "invalid" unless the parsed
// query has exactly one fieldValidation, and one of "", Ignore, Warn and
// Strict. (A query mentioning it elsewhere, in another parameter's name or
// value, is "invalid" too, as upstream's.)
func fieldValidationIndex(u *url.URL) int {
	if !strings.Contains(u.RawQuery, "fieldValidation") {
		return 0
	}
	vs := u.Query()["fieldValidation"]
	if len(vs) != 1 {
		return fieldValidationInvalid
	}
	for i, v := range fieldValidationValues[:fieldValidationInvalid] {
		if vs[0] == v {
			return i
		}
	}
	return fieldValidationInvalid
}
