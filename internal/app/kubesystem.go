package app

import (
	"context"
	"fmt"
	"os"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/pkg/client/lazy"
	"github.com/kapi-dev/kapi/pkg/controlplane/identitylease"
	"github.com/kapi-dev/kapi/pkg/controlplane/legacytokentracking"
	"github.com/kapi-dev/kapi/pkg/server"
)

// The hooks of the objects kube-apiserver keeps in kube-system (upstream's
// names, k8s.io/kubernetes pkg/controlplane/apiserver/server.go, v1.37.2).
const (
	identityLeaseHook       = "start-kube-apiserver-identity-lease-controller"
	identityLeaseStopHook   = "stop-kube-apiserver-identity-lease-controller"
	identityLeaseGCHook     = "start-kube-apiserver-identity-lease-garbage-collector"
	legacyTokenTrackingHook = "start-legacy-token-tracking-controller"
	identityLeaseGCSelector = identitylease.ComponentLabelKey + "=" + identitylease.KubeAPIServer
	identityLeaseNamespace  = metav1.NamespaceSystem
)

// installKubeSystemControllers adds to the core server kube-apiserver's
// identity Lease controller, the garbage collector of expired identity
// Leases and the legacy token tracking controller, with upstream's hooks:
// post-start start-kube-apiserver-identity-lease-controller,
// start-kube-apiserver-identity-lease-garbage-collector and
// start-legacy-token-tracking-controller, and pre-shutdown
// stop-kube-apiserver-identity-lease-controller, which deletes the Lease
// while the server still serves.
//
// The hooks return at once, as upstream's (whose identity hook also waits
// for the deletion of a Lease left by an earlier run): the controllers
// start once the server is ready (see whenReady), so that their requests
// cost nothing before the first 200 from /readyz. They write through the
// in-process loopback client as kube-apiserver (manager kube-apiserver in
// the objects' managed fields) and stop when the server stops.
func (c *Config) installKubeSystemControllers(core *server.GenericServer) error {
	o := c.Options
	hostname, err := o.hostname()
	if err != nil {
		return fmt.Errorf("error getting hostname for apiserver identity: %w", err)
	}
	if c.APIServerID, err = identitylease.ID(hostname); err != nil {
		return err
	}
	public, port, err := c.advertised()
	if err != nil {
		return err
	}
	duration := o.IdentityLeaseDurationSeconds
	if duration <= 0 {
		duration = identitylease.DefaultDurationSeconds
	}
	renew := o.IdentityLeaseRenewInterval
	if renew <= 0 {
		renew = identitylease.DefaultRenewInterval
	}
	gcPeriod := o.IdentityLeaseGCPeriod
	if gcPeriod <= 0 {
		gcPeriod = identitylease.DefaultGCPeriod
	}
	bg := &backgroundControllers{c: c}
	core.AddDestroyFunc(bg.wait)

	lease := &identityLeaseRunner{}
	if err := core.AddPostStartHook(identityLeaseHook, func(ctx context.Context) error {
		bg.runWhenReady(ctx, func(ctx context.Context, client *lazy.Clientset) {
			ctrl := lease.start(func() *identitylease.Controller {
				return identitylease.New(identitylease.Config{
					Leases:          client.CoordinationV1(),
					Name:            c.APIServerID,
					Namespace:       identityLeaseNamespace,
					Holder:          c.APIServerID + "_" + string(uuid.NewUUID()),
					DurationSeconds: duration,
					RenewInterval:   renew,
					Process:         identitylease.Heartbeat(identitylease.KubeAPIServer, hostname, identitylease.PeerAddress(public, port)),
					Logger:          c.Logger,
				})
			})
			if ctrl != nil {
				ctrl.Run(ctx)
			}
		})
		return nil
	}); err != nil {
		return err
	}
	if err := core.AddPreShutdownHook(identityLeaseStopHook, func() error {
		lease.stop()
		return nil
	}); err != nil {
		return err
	}
	if err := core.AddPostStartHook(identityLeaseGCHook, func(ctx context.Context) error {
		bg.runWhenReady(ctx, func(ctx context.Context, client *lazy.Clientset) {
			gc := &identitylease.GC{
				Leases:    client.CoordinationV1(),
				Namespace: identityLeaseNamespace,
				Selector:  identityLeaseGCSelector,
				Period:    gcPeriod,
				Logger:    c.Logger,
			}
			gc.Run(ctx)
		})
		return nil
	}); err != nil {
		return err
	}
	return core.AddPostStartHook(legacyTokenTrackingHook, func(ctx context.Context) error {
		bg.runWhenReady(ctx, func(ctx context.Context, client *lazy.Clientset) {
			(&legacytokentracking.Controller{Client: client, Logger: c.Logger}).Run(ctx)
		})
		return nil
	})
}

// identityLeaseRunner starts the identity Lease controller unless the
// pre-shutdown hook came first, and stops it.
type identityLeaseRunner struct {
	mu      sync.Mutex
	ctrl    *identitylease.Controller
	stopped bool
}

// start makes the controller with mk and returns it, or nil after stop.
func (r *identityLeaseRunner) start(mk func() *identitylease.Controller) *identitylease.Controller {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil
	}
	r.ctrl = mk()
	return r.ctrl
}

// stop stops the controller (deleting the Lease) if it started. A
// controller that never started made no Lease; unlike upstream's, whose
// Stop always deletes, it leaves an earlier run's Lease to the garbage
// collector.
func (r *identityLeaseRunner) stop() {
	r.mu.Lock()
	r.stopped = true
	ctrl := r.ctrl
	r.mu.Unlock()
	if ctrl != nil {
		ctrl.Stop()
	}
}

// hostname is the host name the API server identity derives from.
func (o *Options) hostname() (string, error) {
	if o.Hostname != nil {
		return o.Hostname()
	}
	return os.Hostname()
}

// apiserverClient is the client of kube-apiserver's own controllers: the
// in-process loopback client (system:apiserver) with kube-apiserver's
// user agent, so that their writes are recorded as kube-apiserver's and
// are served while the server shuts down.
func (c *Config) apiserverClient() (*lazy.Clientset, error) {
	cfg, err := c.apiserverClientConfig()
	if err != nil {
		return nil, err
	}
	return lazy.NewForConfig(cfg)
}

func (c *Config) apiserverClientConfig() (*rest.Config, error) {
	if c.inProcess == nil {
		return nil, fmt.Errorf("the server's loopback client is not set up yet")
	}
	cfg, err := c.inProcessClientConfig(c.inProcess)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = loopbackUserAgent()
	return cfg, nil
}

// backgroundControllers owns the goroutines of the controllers that start
// once the server is ready, and their client.
type backgroundControllers struct {
	c  *Config
	wg sync.WaitGroup

	once   sync.Once
	client *lazy.Clientset
	err    error
}

// runWhenReady runs run(ctx, client) on a goroutine of its own once the
// server is ready (the first 200 from /readyz, or a second after every
// post-start hook returned when nothing asks), unless ctx ends first. The
// client (kube-apiserver's, see apiserverClient) is made then too: nothing
// of it is paid for before the server is ready.
func (b *backgroundControllers) runWhenReady(ctx context.Context, run func(context.Context, *lazy.Clientset)) {
	head := b.c.head
	b.wg.Go(func() {
		whenReady(head.LifecycleSignals().HasBeenReady.Signaled(), head.PostStartHooksFinished(), ctx.Done(), 0, func() {
			b.once.Do(func() { b.client, b.err = b.c.apiserverClient() })
			if b.err != nil {
				b.c.Logger.Error("kube-apiserver's controllers in kube-system do not run", "err", b.err)
				return
			}
			run(ctx, b.client)
		})
	})
}

// wait waits for the goroutines; they end with the hooks' context (the
// server stopping).
func (b *backgroundControllers) wait() { b.wg.Wait() }

// loopbackSecrets patches Secrets through the server's loopback client as
// kube-apiserver: the legacy-token last-used label (upstream's
// SecretsWriter is its loopback client). The client is made at the first
// patch, when the server serves.
type loopbackSecrets struct {
	c      *Config
	once   sync.Once
	client *lazy.Clientset
	err    error
}

// PatchSecret merge-patches the Secret. The patch is a request of its own:
// it carries none of the authenticating request's context values (its
// user, audit event, warning recorder), only its cancellation.
func (s *loopbackSecrets) PatchSecret(ctx context.Context, namespace, name string, patch []byte) error {
	s.once.Do(func() { s.client, s.err = s.c.apiserverClient() })
	if s.err != nil {
		return s.err
	}
	pctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	_, err := s.client.CoreV1().Secrets(namespace).Patch(pctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}
