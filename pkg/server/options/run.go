package options

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/kapi-dev/kapi/pkg/server/filters"
)

// ServerRunOptions are the generic run flags: timeouts, limits and the
// graceful-termination knobs (lifecycle.md §H).
type ServerRunOptions struct {
	ShutdownDelayDuration               time.Duration
	ShutdownSendRetryAfter              bool
	ShutdownWatchTerminationGracePeriod time.Duration
	RequestTimeout                      time.Duration
	MinRequestTimeout                   int
	MaxRequestsInFlight                 int
	MaxMutatingRequestsInFlight         int
	LivezGracePeriod                    time.Duration
	// CORSAllowedOrigins are --cors-allowed-origins: regular expressions
	// of the origins CORS requests are answered for; empty: CORS off.
	CORSAllowedOrigins []string
	// HSTSDirectives are --strict-transport-security-directives; empty:
	// no Strict-Transport-Security header.
	HSTSDirectives []string
	// GoawayChance is --goaway-chance.
	GoawayChance float64
	// EventTTL is --event-ttl.
	EventTTL time.Duration
	// EnableProfiling is --profiling: /debug/pprof/ served (upstream's
	// FeatureOptions flag, default true; only system:masters may read it
	// once RBAC is on, as no bootstrap role grants it).
	EnableProfiling bool
	// EnableContentionProfiling is --contention-profiling: block profiling
	// on, when profiling is.
	EnableContentionProfiling bool
}

// NewServerRunOptions returns kube-apiserver's defaults.
func NewServerRunOptions() *ServerRunOptions {
	return &ServerRunOptions{
		RequestTimeout:              time.Minute,
		MinRequestTimeout:           1800,
		MaxRequestsInFlight:         400,
		MaxMutatingRequestsInFlight: 200,
		EventTTL:                    time.Hour,
		EnableProfiling:             true,
	}
}

// AddFlags adds the run flags to fs.
func (o *ServerRunOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", o.ShutdownDelayDuration, "Time to delay the termination. During that time the server keeps serving requests normally. The endpoints /healthz and /livez will return success, but /readyz immediately returns failure.")
	fs.BoolVar(&o.ShutdownSendRetryAfter, "shutdown-send-retry-after", o.ShutdownSendRetryAfter, "If true the HTTP Server will continue listening until all non long running request(s) in flight have been drained, during this window all incoming requests will be rejected with a status code 429 and a 'Retry-After' response header.")
	fs.DurationVar(&o.ShutdownWatchTerminationGracePeriod, "shutdown-watch-termination-grace-period", o.ShutdownWatchTerminationGracePeriod, "This option, if set, represents the maximum amount of grace period the apiserver will wait for active watch request(s) to drain during the graceful server shutdown window.")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "An optional field indicating the duration a handler must keep a request open before timing it out.")
	fs.IntVar(&o.MinRequestTimeout, "min-request-timeout", o.MinRequestTimeout, "An optional field indicating the minimum number of seconds a handler must keep a request open before timing it out. Currently only honored by the watch request handler.")
	fs.IntVar(&o.MaxRequestsInFlight, "max-requests-inflight", o.MaxRequestsInFlight, "The maximum number of non-mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.")
	fs.IntVar(&o.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", o.MaxMutatingRequestsInFlight, "The maximum number of mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.")
	fs.DurationVar(&o.LivezGracePeriod, "livez-grace-period", o.LivezGracePeriod, "This option represents the maximum amount of time it should take for apiserver to complete its startup sequence and become live.")
	fs.StringSliceVar(&o.CORSAllowedOrigins, "cors-allowed-origins", o.CORSAllowedOrigins, "List of allowed origins for CORS, comma separated. An allowed origin can be a regular expression to support subdomain matching. If this list is empty CORS will not be enabled. Please ensure each expression matches the entire hostname by anchoring to the start with '^' or including the '//' prefix, and by anchoring to the end with '$' or including the ':' port separator suffix. Examples of valid expressions are '//example\\.com(:|$)' and '^https://example\\.com(:|$)'")
	fs.BoolVar(&o.EnableProfiling, "profiling", o.EnableProfiling, "Enable profiling via web interface host:port/debug/pprof/")
	fs.BoolVar(&o.EnableContentionProfiling, "contention-profiling", o.EnableContentionProfiling, "Enable block profiling, if profiling is enabled")
	fs.DurationVar(&o.EventTTL, "event-ttl", o.EventTTL, "Amount of time to retain events.")
	fs.Float64Var(&o.GoawayChance, "goaway-chance", o.GoawayChance, "To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection (GOAWAY). The client's other in-flight requests won't be affected, and the client will reconnect, likely landing on a different apiserver after going through the load balancer again. This argument sets the fraction of requests that will be sent a GOAWAY. Clusters with single apiservers, or which don't use a load balancer, should NOT enable this. Min is 0 (off), Max is .02 (1/50 requests); .001 (1/1000) is a recommended starting point.")
	fs.StringSliceVar(&o.HSTSDirectives, "strict-transport-security-directives", o.HSTSDirectives, "List of directives for HSTS, comma separated. If this list is empty, then HSTS directives will not be added. Example: 'max-age=31536000,includeSubDomains,preload'")
}

// Validate checks the flags with kube-apiserver's messages.
func (o *ServerRunOptions) Validate() []error {
	var errs []error
	if o.ShutdownDelayDuration < 0 {
		errs = append(errs, errors.New("--shutdown-delay-duration can not be negative value"))
	}
	if o.ShutdownWatchTerminationGracePeriod < 0 {
		errs = append(errs, errors.New("shutdown-watch-termination-grace-period, if provided, can not be a negative value"))
	}
	if o.RequestTimeout < 0 {
		errs = append(errs, errors.New("--request-timeout can not be negative value"))
	}
	if o.MinRequestTimeout < 0 {
		errs = append(errs, errors.New("--min-request-timeout can not be negative value"))
	}
	if o.MaxRequestsInFlight < 0 {
		errs = append(errs, errors.New("--max-requests-inflight can not be negative value"))
	}
	if o.MaxMutatingRequestsInFlight < 0 {
		errs = append(errs, errors.New("--max-mutating-requests-inflight can not be negative value"))
	}
	if o.LivezGracePeriod < 0 {
		errs = append(errs, errors.New("--livez-grace-period can not be a negative value"))
	}
	if o.EventTTL < 0 {
		errs = append(errs, errors.New("--event-ttl can not be negative value"))
	}
	if o.GoawayChance < 0 || o.GoawayChance > 0.02 {
		errs = append(errs, errors.New("--goaway-chance can not be less than 0 or greater than 0.02"))
	}
	if _, err := filters.CompileCORSOrigins(o.CORSAllowedOrigins); err != nil {
		errs = append(errs, fmt.Errorf("--cors-allowed-origins: %w", err))
	}
	if err := filters.ValidateHSTSDirectives(o.HSTSDirectives); err != nil {
		errs = append(errs, fmt.Errorf("--strict-transport-security-directives: %w", err))
	}
	return errs
}
