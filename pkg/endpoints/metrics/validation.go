package metrics

import "github.com/prometheus/client_golang/prometheus"

// validationCounters are k8s.io/apiserver v0.37.2 pkg/validation's
// families: apiserver_validation_declarative_validation_mismatch_total,
// apiserver_validation_declarative_validation_panic_total and
// apiserver_validation_duplicate_validation_error_total.
//
// Upstream counts a mismatch when a type's declarative validation
// (generated from API tags) and its handwritten validation disagree, and
// a panic when the declarative validators panic: both 0 unless upstream
// has a bug. kapi has one validation per type, handwritten, whose errors
// are upstream's declarative and handwritten ones together, so nothing
// can disagree or panic there: both stay 0 (the reference's values).
// Duplicates are counted as upstream: see DuplicateValidationErrors.
type validationCounters struct {
	mismatch, panics, duplicates prometheus.Counter
}

func newValidationCounters() *validationCounters {
	return &validationCounters{
		mismatch: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_validation_declarative_validation_mismatch_total",
			Help: "[BETA] Number of times declarative validation results differed from handwritten validation results for core types.",
		}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_validation_declarative_validation_panic_total",
			Help: "[BETA] Number of times declarative validation has panicked during validation.",
		}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_validation_duplicate_validation_error_total",
			Help: "[INTERNAL] Number of duplicate validation errors during validation.",
		}),
	}
}

// DuplicateValidationErrors counts n errors of a refused update that
// repeat an earlier error of the same update word for word (upstream's
// rest.RecordDuplicateValidationErrors, called by BeforeUpdate only: not
// on create). Its method value is what storage is handed to record with
// (rest.WithDuplicateValidationErrors).
func (m *Metrics) DuplicateValidationErrors(n int) {
	if m != nil && n > 0 {
		m.validation.duplicates.Add(float64(n))
	}
}
