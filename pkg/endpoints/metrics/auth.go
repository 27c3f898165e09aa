package metrics

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// authBuckets are upstream's ExponentialBuckets(0.001, 2, 15) of the
// authentication, authorization and impersonation histograms.
var authBuckets = prometheus.ExponentialBuckets(0.001, 2, 15)

// AuthMetrics are the authentication, authorization and impersonation
// filters' metrics, as kube-apiserver v1.37 serves them
// (k8s.io/apiserver pkg/endpoints/filters/metrics.go and
// filters/impersonation/metrics, all ALPHA). Series appear once observed.
// A nil *AuthMetrics records nothing.
type AuthMetrics struct {
	users          *prometheus.CounterVec   // authenticated_user_requests{username}
	authnAttempts  *prometheus.CounterVec   // authentication_attempts{result}
	authnLatency   *prometheus.HistogramVec // authentication_duration_seconds{result}
	authzAttempts  *prometheus.CounterVec   // authorization_attempts_total{result}
	authzLatency   *prometheus.HistogramVec // authorization_duration_seconds{result}
	impAttempts    *prometheus.CounterVec   // apiserver_impersonation_attempts_total{mode,decision}
	impLatency     *prometheus.HistogramVec // apiserver_impersonation_attempts_duration_seconds
	impAuthzChecks *prometheus.CounterVec   // apiserver_impersonation_authorization_attempts_total
	impAuthzLat    *prometheus.HistogramVec // apiserver_impersonation_authorization_attempts_duration_seconds
	// selfRequests is apiserver_selfrequest_total (upstream's
	// endpoints/metrics), counted where the authorized user is known
	// (see SelfRequest); registered by New.
	selfRequests *prometheus.CounterVec
	selfMu       sync.RWMutex
	self         map[selfKey]prometheus.Counter

	// children keeps each label combination's series after its first
	// observation: a request costs a map lookup, not a label hash per
	// family.
	children sync.Map // authSeriesKey -> authSeries
}

type authSeriesKey struct {
	family string // "authn", "user", "authz", "imp", "impauthz"
	a, b   string
}

type authSeries struct {
	counter  prometheus.Counter
	observer prometheus.Observer
}

// NewAuthMetrics creates the metrics and registers them on reg (nil: not
// registered).
func NewAuthMetrics(reg prometheus.Registerer) (*AuthMetrics, error) {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: "[ALPHA] " + help}, labels)
	}
	histogram := func(name, help string, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: "[ALPHA] " + help, Buckets: authBuckets}, labels)
	}
	m := &AuthMetrics{
		users:         counter("authenticated_user_requests", "Counter of authenticated requests broken out by username.", "username"),
		authnAttempts: counter("authentication_attempts", "Counter of authenticated attempts.", "result"),
		authnLatency:  histogram("authentication_duration_seconds", "Authentication duration in seconds broken out by result.", "result"),
		authzAttempts: counter("authorization_attempts_total",
			"Counter of authorization attempts broken down by result. It can be either 'allowed', 'denied', 'no-opinion' or 'error'.", "result"),
		authzLatency: histogram("authorization_duration_seconds", "Authorization duration in seconds broken out by result.", "result"),
		impAttempts: counter("apiserver_impersonation_attempts_total",
			"Total number of impersonation attempts split by mode and decision.", "mode", "decision"),
		impLatency: histogram("apiserver_impersonation_attempts_duration_seconds",
			"Latency of impersonation attempts in seconds split by mode and decision.", "mode", "decision"),
		impAuthzChecks: counter("apiserver_impersonation_authorization_attempts_total",
			"Total number of authorization checks made by the impersonation handler split by mode and decision.", "mode", "decision"),
		impAuthzLat: histogram("apiserver_impersonation_authorization_attempts_duration_seconds",
			"Latency of authorization checks made by the impersonation handler in seconds split by mode and decision.", "mode", "decision"),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.users, m.authnAttempts, m.authnLatency, m.authzAttempts, m.authzLatency,
			m.impAttempts, m.impLatency, m.impAuthzChecks, m.impAuthzLat} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register authentication and authorization metrics: %w", err)
			}
		}
	}
	return m, nil
}

// The results of authentication and authorization, as upstream labels them.
const (
	AuthnSuccess = "success"
	AuthnFailure = "failure"
	AuthnError   = "error"

	AuthzAllowed   = "allowed"
	AuthzDenied    = "denied"
	AuthzNoOpinion = "no-opinion"
	AuthzError     = "error"
)

// Authentication records one authentication: result is AuthnSuccess (with
// the user's name), AuthnFailure (no credentials the authenticator knows)
// or AuthnError (bad credentials).
func (m *AuthMetrics) Authentication(result, username string, d time.Duration) {
	if m == nil {
		return
	}
	if result == AuthnSuccess {
		m.series(authSeriesKey{family: "user", a: compressUsername(username)}).counter.Inc()
	}
	s := m.series(authSeriesKey{family: "authn", a: result})
	s.counter.Inc()
	s.observer.Observe(d.Seconds())
}

// Authorization records one decision of the authorization filter.
func (m *AuthMetrics) Authorization(result string, d time.Duration) {
	if m == nil {
		return
	}
	s := m.series(authSeriesKey{family: "authz", a: result})
	s.counter.Inc()
	s.observer.Observe(d.Seconds())
}

// Impersonation records one impersonation attempt: mode is the mode that
// allowed it ("" when denied), decision "allowed" or "denied".
func (m *AuthMetrics) Impersonation(mode, decision string, d time.Duration) {
	if m == nil {
		return
	}
	s := m.series(authSeriesKey{family: "imp", a: mode, b: decision})
	s.counter.Inc()
	s.observer.Observe(d.Seconds())
}

// ImpersonationAuthorization records one authorization check the
// impersonation filter made, by the mode its verb belongs to.
func (m *AuthMetrics) ImpersonationAuthorization(verb string, allowed bool, d time.Duration) {
	if m == nil {
		return
	}
	decision := "denied"
	if allowed {
		decision = "allowed"
	}
	s := m.series(authSeriesKey{family: "impauthz", a: ImpersonationMode(verb), b: decision})
	s.counter.Inc()
	s.observer.Observe(d.Seconds())
}

// ImpersonationMode is the mode of an impersonation verb, or of an
// allowed impersonation's constraint ("" and "impersonate": legacy), as
// upstream's modeFromVerb and modeFromConstraint.
func ImpersonationMode(verb string) string {
	for _, mode := range []string{"associated-node", "arbitrary-node", "serviceaccount", "user-info"} {
		if verb == "impersonate:"+mode || strings.HasPrefix(verb, "impersonate-on:"+mode+":") {
			return mode
		}
	}
	if verb == "" || verb == "impersonate" {
		return "legacy"
	}
	return "unknown"
}

func (m *AuthMetrics) series(k authSeriesKey) authSeries {
	if s, ok := m.children.Load(k); ok {
		return s.(authSeries)
	}
	var s authSeries
	switch k.family {
	case "user":
		s = authSeries{counter: m.users.WithLabelValues(k.a)}
	case "authn":
		s = authSeries{counter: m.authnAttempts.WithLabelValues(k.a), observer: m.authnLatency.WithLabelValues(k.a)}
	case "authz":
		s = authSeries{counter: m.authzAttempts.WithLabelValues(k.a), observer: m.authzLatency.WithLabelValues(k.a)}
	case "imp":
		s = authSeries{counter: m.impAttempts.WithLabelValues(k.a, k.b), observer: m.impLatency.WithLabelValues(k.a, k.b)}
	case "impauthz":
		s = authSeries{counter: m.impAuthzChecks.WithLabelValues(k.a, k.b), observer: m.impAuthzLat.WithLabelValues(k.a, k.b)}
	}
	actual, _ := m.children.LoadOrStore(k, s)
	return actual.(authSeries)
}

// compressUsername maps a user name onto upstream's few categories (the
// known internal identities, "email_id" for names with "@", "other"), so
// that no user name reaches the metrics.
func compressUsername(name string) string {
	switch {
	case name == "admin" || name == "client" || name == "kube_proxy" || name == "kubelet" ||
		name == "system:serviceaccount:kube-system:default":
		return name
	case strings.Contains(name, "@"):
		return "email_id"
	}
	return "other"
}
