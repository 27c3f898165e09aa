package app

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/manager"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/options"
	"github.com/kapi-dev/kapi/pkg/version"
)

// How long the controllers may take: to be elected (or see another
// leader) and sync before the post-start hook lets readiness go on
// regardless, and to stop (and release the Lease) at shutdown.
const (
	controllersReadyTimeout = 30 * time.Second
	controllersStopTimeout  = 15 * time.Second
)

// installControllers runs kapi's controller manager (garbage collector,
// default service accounts, root CA publisher; see package manager) on the
// head server: the post-start hook start-kapi-controller-manager starts it
// and returns once it leads with its per-namespace controllers synced, or
// follows another server; the pre-shutdown hook stop-kapi-controller-manager
// stops the controllers and releases the Lease while the server still
// serves, so another server takes over at once.
//
// The controllers reach the API through a loopback client (authenticated
// by the loopback token; served in-process, through the head's whole
// handler chain, see inProcessTransport), as kube-controller-manager
// reaches kube-apiserver: through discovery they see every resource the
// chain serves, CRDs included, as it changes.
func (c *Config) installControllers(head *server.GenericServer) error {
	o := c.Options.Controllers
	for _, entry := range manager.NotRun(o.Controllers) {
		c.Logger.Info("--controllers names a kube-controller-manager controller kapi does not run; ignored", "entry", entry)
	}
	loopback, err := c.inProcessClientConfig(c.inProcess)
	if err != nil {
		return err
	}
	signers, err := c.clusterSigners()
	if err != nil {
		return err
	}
	deferred := make(chan struct{})
	m, err := manager.New(manager.Config{
		Client:      loopback,
		Controllers: o.Controllers,
		LeaderElection: manager.LeaderElection{
			Enabled:       o.LeaderElect,
			LeaseDuration: o.LeaseDuration,
			RenewDeadline: o.RenewDeadline,
			RetryPeriod:   o.RetryPeriod,
			Name:          o.ResourceName,
			Namespace:     o.ResourceNamespace,
			// Only an external etcd, or a clustered embedded one, is
			// shared with other servers.
			ExclusiveStorage: (c.Options.Storage.Backend == options.StorageBackendMemory || len(c.Options.Storage.ServerList) == 0) && c.cluster == nil,
		},
		RootCA:     c.CAPEM,
		Registerer: c.Generic.MetricsRegistry,
		Logger:     c.Logger,

		// Signs legacy kubernetes.io/service-account-token Secrets.
		LegacyTokens: c.authn.issuer,
		// The CSR signer: the cluster CA, which client certificates
		// are always verified with.
		ClusterSigningCA:       c.ClusterCA,
		ClusterSigningKey:      c.ClusterCAKey,
		ClusterSigningDuration: c.Options.CSRSigning.Duration,
		ClusterSigners:         signers,

		ResourceQuotaSyncPeriod: c.Options.ResourceQuota.SyncPeriod,
		// The controllers readiness does not wait for start once the
		// server is ready: at its first 200 from /readyz (a second after
		// every post-start hook is done if nothing asks). Started when
		// the hooks were done, their ~70 lists and watches ran beside
		// that first /readyz and delayed it.
		StartDeferred: deferred,
	})
	if err != nil {
		return err
	}
	r := &controllerRunner{m: m, cfg: c, deferred: deferred,
		ready: head.LifecycleSignals().HasBeenReady.Signaled(), hooksFinished: head.PostStartHooksFinished()}
	if err := head.AddPostStartHook("start-kapi-controller-manager", r.start); err != nil {
		return err
	}
	if err := head.AddPreShutdownHook("stop-kapi-controller-manager", func() error {
		r.stop()
		return nil
	}); err != nil {
		return err
	}
	// Destroy functions run after Run returned, or when building the
	// chain failed later: stop the controllers if they still run (the
	// in-process transport's own destroy function, registered earlier,
	// runs after this one).
	head.AddDestroyFunc(r.stop)
	return nil
}

// controllerRunner owns the manager's goroutine.
type controllerRunner struct {
	m   *manager.Manager
	cfg *Config
	// deferred is the manager's StartDeferred: closed once the server is
	// ready (ready, or hooksFinished and a second; see whenReady).
	deferred             chan struct{}
	ready, hooksFinished <-chan struct{}

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *controllerRunner) start(hookCtx context.Context) error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	r.mu.Lock()
	r.cancel, r.done = cancel, done
	r.mu.Unlock()
	go whenReady(r.ready, r.hooksFinished, ctx.Done(), 0, func() { close(r.deferred) })
	go func() {
		defer close(done)
		r.m.Run(ctx)
	}()
	// The hook context ends when the HTTP server is told to stop: by then
	// the pre-shutdown hook stopped the controllers, unless it did not run.
	context.AfterFunc(hookCtx, cancel)
	select {
	case <-r.m.Ready():
	case <-hookCtx.Done():
	case <-time.After(controllersReadyTimeout):
		r.cfg.Logger.Warn("the controllers are not ready yet; serving anyway", "timeout", controllersReadyTimeout)
	}
	return nil
}

// stop stops the manager and waits (bounded) for it. Idempotent.
func (r *controllerRunner) stop() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	select {
	case <-done:
	case <-time.After(controllersStopTimeout):
		r.cfg.Logger.Warn("the controllers did not stop in time", "timeout", controllersStopTimeout)
	}
}

// loopbackClientConfig is the client config of the server's own
// controllers: HTTPS to its listener, authenticated as system:apiserver by
// the loopback token, without client-side rate limits. The server is
// trusted by its exact serving certificate (pinned), which holds whether
// or not that certificate names the address dialled or chains to a CA
// this process knows (--tls-cert-file).
func (c *Config) loopbackClientConfig() (*rest.Config, error) {
	ss := c.Generic.SecureServing
	if ss == nil || ss.Cert == nil || len(ss.Cert.Certificate) == 0 {
		return nil, errors.New("loopback client: no serving certificate")
	}
	leaf := ss.Cert.Certificate[0]
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			// Verification is VerifyConnection's: the peer must present
			// this server's serving certificate.
			InsecureSkipVerify: true, //nolint:gosec // pinned below
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, leaf) {
					return errors.New("loopback client: the server did not present this server's serving certificate")
				}
				return nil
			},
		},
		DialContext:         c.loopbackConnTracker().dial,
		ForceAttemptHTTP2:   !c.Options.SecureServing.DisableHTTP2Serving,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &rest.Config{
		Host:        "https://" + serverHost(c.Address),
		BearerToken: c.LoopbackToken,
		Transport:   tr,
		QPS:         -1,
		// kube-controller-manager's name: the controllers' writes carry
		// its field manager ("kube-controller-manager", the user agent's
		// first segment), as in a cluster where it runs them.
		UserAgent: controllerManagerUserAgent(),
		// Protobuf and no compression, as kube-apiserver's loopback
		// client (BuildGenericConfig, pkg/controlplane/apiserver,
		// v1.37): the bootstrap writes and the controllers' lists cost
		// less to encode and decode than JSON on both ends. Clients of
		// custom resources (dynamic) ask for JSON themselves.
		ContentConfig:      rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf},
		DisableCompression: true,
	}, nil
}

// controllerManagerUserAgent is client-go's default user agent as
// kube-controller-manager sends it (rest.DefaultKubernetesUserAgent:
// "<command>/<version> (<os>/<arch>) kubernetes/<commit>", "unknown" for a
// commit not stamped).
func controllerManagerUserAgent() string {
	v := version.Get()
	commit := v.GitCommit
	if len(commit) > 7 {
		commit = commit[:7]
	}
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("kube-controller-manager/%s (%s) kubernetes/%s", v.GitVersion, v.Platform, commit)
}
