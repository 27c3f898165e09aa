package app

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	authzconfig "github.com/kapi-dev/kapi/pkg/auth/authorizer/config"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer/union"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer/webhook"
	"github.com/kapi-dev/kapi/pkg/auth/node"
	"github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/client/lazy"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/accessreview"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
	"github.com/kapi-dev/kapi/pkg/server/options"
	"github.com/kapi-dev/kapi/pkg/version"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// buildAuthorizer makes the chain of --authorization-mode or
// --authorization-config, behind the privileged-groups authorizer
// (system:masters, which the admin kubeconfig and the loopback identity
// belong to, may do everything, as upstream). The RBAC rule resolver is
// always made: the RBAC resources' escalation checks use it whatever the
// modes. The chain can be replaced while serving (a changed
// --authorization-config file, see startConfigReload).
func (c *Config) buildAuthorizer() error {
	c.RBAC = rbac.New(nil)
	o := c.Options.Authorization
	dyn := &dynamicAuthorizer{}
	var entries []authzconfig.Authorizer
	if o.ConfigFile != "" {
		data, err := os.ReadFile(o.ConfigFile)
		if err != nil {
			return fmt.Errorf("--authorization-config: %w", err)
		}
		cfg, err := authzconfig.Parse(o.ConfigFile, data)
		if err != nil {
			return err
		}
		entries, dyn.loaded = cfg.Authorizers, data
	} else {
		for _, m := range o.EffectiveModes() {
			e := authzconfig.Authorizer{Type: m, Name: m}
			if m == options.ModeWebhook {
				e.Webhook = &authzconfig.Webhook{
					Timeout: metav1.Duration{Duration: 30 * time.Second}, SubjectAccessReviewVersion: o.WebhookVersion,
					AuthorizedTTL: metav1.Duration{Duration: o.WebhookCacheAuthorized}, UnauthorizedTTL: metav1.Duration{Duration: o.WebhookCacheDenied},
					FailurePolicy: "NoOpinion", ConnectionInfo: authzconfig.ConnectionInfo{Type: "KubeConfigFile", KubeConfigFile: o.WebhookConfigFile},
				}
			}
			entries = append(entries, e)
		}
	}
	if slices.ContainsFunc(entries, func(e authzconfig.Authorizer) bool { return e.Type == options.ModeNode }) {
		// The graph is filled by informers in installRBAC's hook.
		c.NodeGraph = node.NewGraph()
	}
	chain, err := c.authorizerChain(entries)
	if err != nil {
		return err
	}
	dyn.chain.Store(chain)
	c.Authorizer = dyn
	c.RuleResolver = dyn
	return nil
}

// authorizerChain builds the authorizers of entries.
func (c *Config) authorizerChain(entries []authzconfig.Authorizer) (*authorizerChain, error) {
	authz := union.Authorizers{union.PrivilegedGroups{user.SystemPrivileged}}
	var resolvers rulesUnion
	for _, e := range entries {
		switch e.Type {
		case options.ModeAlwaysAllow:
			authz = append(authz, union.AlwaysAllow{})
			resolvers = append(resolvers, union.AlwaysAllow{})
		case options.ModeAlwaysDeny:
			authz = append(authz, union.AlwaysDeny{})
			resolvers = append(resolvers, union.AlwaysDeny{})
		case options.ModeRBAC:
			authz = append(authz, c.RBAC)
			resolvers = append(resolvers, c.RBAC)
		case options.ModeNode:
			if c.NodeGraph == nil {
				// Its informers start with the server: a reload cannot
				// add it.
				return nil, fmt.Errorf("authorizer %q: type Node cannot be added to a running server's authorization configuration", e.Name)
			}
			n := node.New(c.NodeGraph)
			authz = append(authz, n)
			resolvers = append(resolvers, n)
		case options.ModeWebhook:
			w, err := newWebhook(e.Webhook, c.WebhookX509)
			if err != nil {
				return nil, fmt.Errorf("authorizer %q: %w", e.Name, err)
			}
			authz = append(authz, w)
			// A webhook cannot list rules (upstream answers the same).
			resolvers = append(resolvers, accessreview.RulesOf(w))
		default:
			return nil, fmt.Errorf("authorizer %q: type %s is not implemented by kapi yet", e.Name, e.Type)
		}
	}
	return &authorizerChain{authz: authz, resolvers: resolvers}, nil
}

// authorizerChain is one configuration's authorizers and rule resolvers.
type authorizerChain struct {
	authz     union.Authorizers
	resolvers rulesUnion
}

// dynamicAuthorizer serves the chain in force; loaded is the
// --authorization-config content it was built from (nil without one).
type dynamicAuthorizer struct {
	chain  atomic.Pointer[authorizerChain]
	loaded []byte
}

func (d *dynamicAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	return d.chain.Load().authz.Authorize(ctx, a)
}

func (d *dynamicAuthorizer) RulesFor(ctx context.Context, who *user.Info, ns string) ([]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return d.chain.Load().resolvers.RulesFor(ctx, who, ns)
}

// reloadAuthorization builds and puts in force a new
// --authorization-config content; an invalid one changes nothing.
func (c *Config) reloadAuthorization(d *dynamicAuthorizer, data []byte) error {
	cfg, err := authzconfig.Parse(c.Options.Authorization.ConfigFile, data)
	if err != nil {
		return err
	}
	chain, err := c.authorizerChain(cfg.Authorizers)
	if err != nil {
		return err
	}
	d.chain.Store(chain)
	return nil
}

// newWebhook makes a webhook authorizer from its (validated) config.
func newWebhook(w *authzconfig.Webhook, x509 *x509metrics.Counters) (*webhook.Authorizer, error) {
	authorized, unauthorized := w.AuthorizedTTL.Duration, w.UnauthorizedTTL.Duration
	if w.CacheAuthorizedRequests != nil && !*w.CacheAuthorizedRequests {
		authorized = 0
	}
	if w.CacheUnauthorizedRequests != nil && !*w.CacheUnauthorizedRequests {
		unauthorized = 0
	}
	var conditions []string
	for _, m := range w.MatchConditions {
		conditions = append(conditions, m.Expression)
	}
	return webhook.New(webhook.Config{
		KubeconfigFile: w.ConnectionInfo.KubeConfigFile, Version: w.SubjectAccessReviewVersion,
		AuthorizedTTL: authorized, UnauthorizedTTL: unauthorized, Retries: 4, Timeout: w.Timeout.Duration,
		MatchConditions: conditions, FailurePolicyDeny: w.FailurePolicy == "Deny",
		WrapTransport: x509.Wrap,
	})
}

// rulesUnion lists the rules of every resolver (incomplete if any is).
type rulesUnion []accessreview.RuleResolver

func (u rulesUnion) RulesFor(ctx context.Context, who *user.Info, ns string) (res []authorizationv1.ResourceRule, non []authorizationv1.NonResourceRule, incomplete bool, err error) {
	for _, r := range u {
		rr, nr, inc, e := r.RulesFor(ctx, who, ns)
		res, non = append(res, rr...), append(non, nr...)
		incomplete = incomplete || inc
		if e != nil && err == nil {
			err = e
		}
	}
	return res, non, incomplete, err
}

var _ authorizer.Authorizer = union.Authorizers(nil)

// loopbackUserAgent is the user agent of kube-apiserver's own loopback
// writes (kube-apiserver/<version>): managed fields record them under
// manager kube-apiserver, and they are exempt from the shutdown's 503s.
func loopbackUserAgent() string {
	return filters.LoopbackUserAgentPrefix + version.Get().GitVersion
}

// installRBAC adds the post-start hook rbac/bootstrap-roles (upstream's
// name): it starts the RBAC informers (and, with mode Node, those filling
// the Node authorizer's graph) on the loopback client, reconciles
// the bootstrap policy (retrying until the system namespaces exist), and
// runs the ClusterRole aggregation until the server stops. Readiness
// waits for it; until the caches sync only system:masters is authorized.
func (c *Config) installRBAC(head *server.GenericServer) error {
	loopback, err := c.inProcessClientConfig(c.inProcess)
	if err != nil {
		return err
	}
	return head.AddPostStartHook("rbac/bootstrap-roles", func(ctx context.Context) error {
		if err := c.startConfigReload(ctx); err != nil {
			return err
		}
		client, err := lazy.NewForConfig(loopback)
		if err != nil {
			return fmt.Errorf("rbac: %w", err)
		}
		// The bootstrap policy is kube-apiserver's own write, with its
		// loopback client (user agent kube-apiserver/<version>): the
		// objects' managed fields name manager kube-apiserver, as the
		// reference's do, not the controller manager.
		bootstrap := rest.CopyConfig(loopback)
		bootstrap.UserAgent = loopbackUserAgent()
		create, err := c.bootstrapCreator(bootstrap)
		if err != nil {
			return err
		}
		factory := informers.NewSharedInformerFactory(client, 0)
		lister := rbac.NewInformerLister(factory)
		agg := &rbac.Aggregator{Client: client, Lister: lister.ClusterRoles, Logger: c.Logger}
		kick := make(chan struct{}, 1)
		notify := func() {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
		if _, err := factory.Rbac().V1().ClusterRoles().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { notify() },
			UpdateFunc: func(any, any) { notify() },
			DeleteFunc: func(any) { notify() },
		}); err != nil {
			return fmt.Errorf("rbac: %w", err)
		}
		bindingAdded := make(chan struct{}, 1)
		if _, err := factory.Rbac().V1().ClusterRoleBindings().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) {
				select {
				case bindingAdded <- struct{}{}:
				default:
				}
			},
		}); err != nil {
			return fmt.Errorf("rbac: %w", err)
		}
		if c.NodeGraph != nil {
			if err := node.Populate(c.NodeGraph, factory); err != nil {
				return err
			}
		}
		// With the context, not its Done channel: a channel's context
		// is not a cancelCtx, so each context the informers derive from
		// it would cost a goroutine waiting for it, for as long as they run.
		factory.StartWithContext(ctx)
		for typ, ok := range factory.WaitForCacheSyncWithContext(ctx).Synced {
			if !ok {
				return fmt.Errorf("rbac: %v cache did not sync", typ)
			}
		}
		c.RBAC.SetLister(lister)
		for {
			// The informers are synced: what exists is read from them
			// rather than listed again through the chain.
			err := rbac.ReconcileFrom(ctx, client, create, lister)
			if err == nil {
				break
			}
			c.Logger.Debug("rbac bootstrap policy: retrying", "err", err)
			select {
			case <-ctx.Done():
				factory.Shutdown()
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
		// The aggregation starts once the policy is written: while the
		// ~70 ClusterRoles are being created each would kick a sync, and
		// admin, edit and view would be rewritten at every step. Its
		// first sync runs here, once the informer has seen every
		// bootstrap ClusterRole, so that when the server is ready the
		// aggregated roles hold their rules.
		roles := rbac.ClusterRoleNames()
		if !awaitListed(ctx, func(name string) bool { _, err := lister.ClusterRoles.Get(name); return err == nil }, roles, kick, 5*time.Second) {
			factory.Shutdown()
			return ctx.Err()
		}
		// Ready also means the authorizer sees the bootstrap bindings: a
		// request right after /readyz said ok (a service account reading
		// /.well-known/openid-configuration through
		// system:service-account-issuer-discovery, say) was denied while
		// the informer had not yet seen its binding.
		bindings := rbac.ClusterRoleBindingNames()
		if !awaitListed(ctx, func(name string) bool { _, err := lister.ClusterRoleBindings.Get(name); return err == nil }, bindings, bindingAdded, 5*time.Second) {
			factory.Shutdown()
			return ctx.Err()
		}
		if err := agg.Sync(ctx); err != nil {
			c.Logger.Debug("clusterrole aggregation: retrying", "err", err)
			notify()
		}
		go func() {
			defer factory.Shutdown()
			for {
				select {
				case <-ctx.Done():
					return
				case <-kick:
					if err := agg.Sync(ctx); err != nil && ctx.Err() == nil {
						// Conflicts are expected while roles change: retry.
						c.Logger.Debug("clusterrole aggregation: retrying", "err", err)
						time.AfterFunc(time.Second, notify)
					}
				}
			}
		}()
		return nil
	})
}

// awaitListed waits until has holds for every name (kick is signalled at
// each change of what has reads), at most max; false if ctx ended first.
func awaitListed(ctx context.Context, has func(name string) bool, names []string, kick <-chan struct{}, max time.Duration) bool {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	pending := names
	for {
		for len(pending) > 0 {
			if !has(pending[0]) {
				break
			}
			pending = pending[1:]
		}
		if len(pending) == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return true // the informers catch up
		case <-kick:
		}
	}
}
