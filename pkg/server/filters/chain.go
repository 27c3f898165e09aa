package filters

import (
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// ChainConfig is everything the default handler chain depends on. Zero
// values turn the optional filters off; see each field.
type ChainConfig struct {
	// Logger for every filter; nil means slog.Default().
	Logger *slog.Logger

	// RequestInfoResolver parses requests; nil means request.NewResolver().
	RequestInfoResolver RequestInfoResolver
	// LongRunning classifies requests; nil means DefaultLongRunning.
	LongRunning LongRunningFunc

	// MuxAndDiscoveryComplete is the lifecycle signal; requests arriving
	// before it closes are marked incomplete. nil: never marked.
	MuxAndDiscoveryComplete <-chan struct{}

	// RetryAfter is the NotAcceptingNewRequest signal when
	// --shutdown-send-retry-after is set, nil otherwise (no RetryAfter
	// filter).
	RetryAfter <-chan struct{}

	// HSTSDirectives of --strict-transport-security-directives (validated
	// by ValidateHSTSDirectives); empty: no HSTS filter.
	HSTSDirectives []string

	// WatchDrainer tracks watches when
	// --shutdown-watch-termination-grace-period > 0; nil otherwise.
	WatchDrainer *WatchDrainer
	// NonLongRunningRequestWaitGroup counts in-flight non-long-running
	// requests for the drain; nil: no WaitGroup filter.
	NonLongRunningRequestWaitGroup *SafeWaitGroup

	// RequestTimeout is --request-timeout (T); 0 means no server deadline.
	RequestTimeout time.Duration
	// TimedOutHandlers, if not nil, counts handler goroutines started by
	// the timeout filter until they return (they may outlive a timed-out
	// request).
	TimedOutHandlers *SafeWaitGroup

	// GoawayChance is --goaway-chance: the probability an HTTP/2 response
	// closes its connection (0: no filter).
	GoawayChance float64
	// CORSAllowedOrigins from CompileCORSOrigins; empty: no CORS filter.
	CORSAllowedOrigins []*regexp.Regexp

	// Authenticator; nil disables authentication (no user on requests).
	Authenticator Authenticator
	// AuthenticationFailed answers requests with bad credentials; nil
	// means Unauthorized().
	AuthenticationFailed http.Handler

	// AuditBackend receives audit events; nil disables auditing.
	AuditBackend audit.Backend
	// AuditPolicy says what is recorded: a fixed audit.Policy (e.g.
	// audit.MetadataPolicy()) or the rules of --audit-policy-file.
	AuditPolicy audit.PolicyEvaluator
	// AuditMetrics counts audit levels, events and rejections; nil: none.
	AuditMetrics *audit.Metrics

	// MaxRequestsInFlight and MaxMutatingRequestsInFlight are the
	// max-in-flight limits (0: unlimited; both 0: no filter).
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	// PriorityAndFairness, if set (--enable-priority-and-fairness),
	// replaces max-in-flight with API Priority and Fairness.
	PriorityAndFairness *PriorityAndFairness

	// Authorizer; nil disables authorization (everything allowed).
	Authorizer authorizer.Authorizer

	// Metrics receives request metrics and in-flight gauges; nil: none.
	Metrics *metrics.Metrics
}

// BuildChain wraps apiHandler in the default filter chain, in the order of
// serving.md §C. Outermost first:
//
//	AuditInit, PanicRecovery, MuxAndDiscoveryComplete marker,
//	RequestReceivedTimestamp, RequestInfo, [RetryAfter], [HSTS],
//	CacheControl, [WatchTermination], [WaitGroup], RequestMetrics,
//	RequestDeadline, Timeout, WarningRecorder, [CORS], Authentication
//	(failures audited), Audit, Impersonation, MaxInFlight or PriorityAndFairness,
//	Authorization, apiHandler.
//
// Request metrics sit just inside the wait group: they see every request
// the server actually serves, including 400s from the deadline filter,
// 504s from the timeout filter, 401, 403 and 429, but not the shutdown
// rejections (upstream records those nowhere either).
func BuildChain(apiHandler http.Handler, c ChainConfig) http.Handler {
	log := orDefault(c.Logger)
	if c.RequestInfoResolver == nil {
		c.RequestInfoResolver = request.NewResolver()
	}
	if c.LongRunning == nil {
		c.LongRunning = DefaultLongRunning
	}
	if c.Authenticator == nil {
		log.Warn("authentication is disabled")
	}
	if c.Authorizer == nil {
		log.Warn("authorization is disabled")
	}

	// The filters upstream measures in
	// apiserver_request_filter_duration_seconds are wrapped as its are:
	// started before the filter, completed in the handler it passes on to.
	started := func(h http.Handler, name string) http.Handler { return metrics.TrackFilterStarted(h, c.Metrics, name) }
	completed := func(h http.Handler) http.Handler { return metrics.TrackFilterCompleted(h, c.Metrics) }
	h := apiHandler
	h = started(WithAuthorization(completed(h), c.Authorizer, log, c.Metrics.Auth()), metrics.FilterAuthorization)
	if c.PriorityAndFairness != nil {
		h = started(WithPriorityAndFairness(completed(h), *c.PriorityAndFairness, c.LongRunning, log), metrics.FilterPriorityAndFairness)
	} else {
		h = WithMaxInFlightLimit(h, c.MaxRequestsInFlight, c.MaxMutatingRequestsInFlight, c.LongRunning, c.Metrics, log)
	}
	h = started(WithImpersonation(completed(h), c.Authorizer, log, c.Metrics.Auth()), metrics.FilterImpersonation)
	h = started(WithAudit(completed(h), c.AuditBackend, c.AuditPolicy, c.LongRunning, c.AuditMetrics), metrics.FilterAudit)
	failed := c.AuthenticationFailed
	if failed == nil {
		failed = Unauthorized()
	}
	failed = completed(WithFailedAuthenticationAudit(failed, c.AuditBackend, c.AuditPolicy, c.AuditMetrics))
	h = started(WithAuthentication(completed(h), c.Authenticator, failed, log, c.Metrics.Auth()), metrics.FilterAuthentication)
	h = WithCORS(h, c.CORSAllowedOrigins)
	h = WithWarningRecorder(h, log)
	h = WithTimeout(h, c.LongRunning, c.TimedOutHandlers, log)
	h = WithRequestDeadlineAudited(h, c.RequestTimeout, c.LongRunning, c.AuditBackend, c.AuditPolicy, c.AuditMetrics, log)
	h = metrics.WithRequestMetrics(h, c.Metrics, metrics.LongRunningFunc(c.LongRunning))
	h = WithWaitGroup(h, c.LongRunning, c.NonLongRunningRequestWaitGroup, log)
	h = WithWatchTermination(h, c.WatchDrainer, log)
	h = WithProbabilisticGoaway(h, c.GoawayChance, nil)
	h = WithCacheControl(h)
	h = WithHSTS(h, c.HSTSDirectives)
	h = WithRetryAfter(h, c.RetryAfter)
	h = WithRequestInfo(h, c.RequestInfoResolver, log)
	h = WithRequestReceivedTimestamp(h)
	h = WithMuxAndDiscoveryComplete(h, c.MuxAndDiscoveryComplete)
	h = WithPanicRecovery(h, log)
	h = withAuditInit(h, !auditOff(c.AuditBackend, c.AuditPolicy))
	h = withServingStack(h)
	return h
}
