package app

import (
	"fmt"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

// applyHandlerChain sets up the filters that run once, at the head of the
// chain (serving.md §C), with the wait groups Run drains and the audit
// backend Run starts and stops.
func (c *Config) applyHandlerChain() error {
	o := c.Options
	g := c.Generic

	nonLongRunning := &filters.SafeWaitGroup{}
	g.NonLongRunningRequestWaitGroup = nonLongRunning
	c.requests = nonLongRunning

	var drainer *filters.WatchDrainer
	if o.Run.ShutdownWatchTerminationGracePeriod > 0 {
		drainer = filters.NewWatchDrainer()
		g.WatchRequestWaitGroup = watchWaiter{drainer}
	}

	var auditBackend audit.Backend
	if (o.Audit.LogPath != "" || o.Audit.Webhook.KubeconfigFile != "") && !o.Audit.Enabled() {
		c.Logger.Info("No audit policy file provided, no events will be recorded")
	}
	if o.Audit.LogPath != "" && o.Audit.Enabled() {
		b, err := audit.OpenRotatingLogBackend(o.Audit.LogPath, o.Audit.LogFormat, audit.RotateConfig{
			MaxSizeMB: o.Audit.LogMaxSize, MaxBackups: o.Audit.LogMaxBackups, MaxAgeDays: o.Audit.LogMaxAge, Compress: o.Audit.LogCompress,
		}, c.Logger)
		if err != nil {
			return fmt.Errorf("--audit-log-path: %w", err)
		}
		b.SetMetrics(c.AuditMetrics)
		auditBackend = o.Audit.LogTruncate.Wrap(b, c.AuditMetrics, c.Logger)
	}
	if o.Audit.Webhook.KubeconfigFile != "" && o.Audit.Enabled() {
		wc := o.Audit.Webhook.WebhookConfig
		wc.WrapTransport = c.WebhookX509.Wrap
		wb, err := audit.NewWebhookBackend(wc, c.Logger, c.AuditMetrics)
		if err != nil {
			return fmt.Errorf("--audit-webhook-config-file: %w", err)
		}
		tb := o.Audit.Webhook.Truncate.Wrap(wb, c.AuditMetrics, c.Logger)
		if auditBackend != nil {
			auditBackend = audit.Union{auditBackend, tb}
		} else {
			auditBackend = tb
		}
	}
	if auditBackend != nil {
		g.AuditBackend = auditBackend
	}

	auditPolicy, err := o.Audit.Policy()
	if err != nil {
		return err
	}
	if err := c.buildAuthorizer(); err != nil {
		return err
	}
	cors, err := filters.CompileCORSOrigins(o.Run.CORSAllowedOrigins)
	if err != nil {
		return fmt.Errorf("--cors-allowed-origins: %w", err)
	}
	chain := filters.ChainConfig{
		CORSAllowedOrigins:             cors,
		HSTSDirectives:                 o.Run.HSTSDirectives,
		GoawayChance:                   goawayChance(o),
		Logger:                         c.Logger,
		MuxAndDiscoveryComplete:        g.LifecycleSignals.MuxAndDiscoveryComplete.Signaled(),
		WatchDrainer:                   drainer,
		NonLongRunningRequestWaitGroup: nonLongRunning,
		RequestTimeout:                 o.Run.RequestTimeout,
		Authenticator:                  c.Authenticator,
		AuditBackend:                   auditBackend,
		AuditPolicy:                    auditPolicy,
		AuditMetrics:                   c.AuditMetrics,
		MaxRequestsInFlight:            o.Run.MaxRequestsInFlight,
		MaxMutatingRequestsInFlight:    o.Run.MaxMutatingRequestsInFlight,
		Authorizer:                     c.Authorizer,
		Metrics:                        c.Metrics,
	}
	if chain.PriorityAndFairness, err = c.newPriorityAndFairness(); err != nil {
		return err
	}
	if o.Run.ShutdownSendRetryAfter {
		chain.RetryAfter = g.LifecycleSignals.NotAcceptingNewRequest.Signaled()
	}
	g.BuildHandlerChainFunc = func(apiHandler http.Handler, _ *server.Config) http.Handler {
		return filters.BuildChain(apiHandler, chain)
	}
	return nil
}

// goawayChance is --goaway-chance when HTTP/2 is served (GOAWAY is an
// HTTP/2 frame).
func goawayChance(o CompletedOptions) float64 {
	if o.SecureServing.DisableHTTP2Serving {
		return 0
	}
	return o.Run.GoawayChance
}

// watchWaiter adapts the drainer to what Run waits on.
type watchWaiter struct{ d *filters.WatchDrainer }

func (w watchWaiter) Wait(grace time.Duration) { w.d.Wait(grace) }
