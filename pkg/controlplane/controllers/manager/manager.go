package manager

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/kapi-dev/kapi/pkg/client/lazy"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/certificates"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/garbagecollector"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/resourcequota"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/rootcacertpublisher"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/serviceaccounttoken"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/volumeprotection"
)

// Config is what a Manager is built from.
type Config struct {
	// Client reaches this server's API (its loopback client). Required.
	Client *rest.Config
	// Controllers is --controllers (nil: ["*"]).
	Controllers []string
	// LeaderElection configures the election; Enabled false runs the
	// controllers at once, without a Lease.
	LeaderElection LeaderElection
	// RootCA is what the root CA publisher publishes (the CA clients
	// verify this server with). Empty: that controller does not run.
	RootCA []byte
	// LegacyTokens signs the tokens of legacy service-account token
	// Secrets; nil: the serviceaccount-token-controller does not run.
	LegacyTokens serviceaccounttoken.Issuer
	// Registerer receives leader_election_master_status; nil: no metric.
	Registerer prometheus.Registerer
	Logger     *slog.Logger

	// GarbageCollectorWorkers and GarbageCollectorSyncPeriod override the
	// collector's defaults (0: garbagecollector.DefaultWorkers,
	// DefaultSyncPeriod).
	// ClusterSigningCA and ClusterSigningKey sign approved certificate
	// signing requests (nil: the csrsigning controller does not run);
	// ClusterSigningDuration is --cluster-signing-duration.
	ClusterSigningCA       *x509.Certificate
	ClusterSigningKey      crypto.Signer
	ClusterSigningDuration time.Duration
	// ClusterSigners, if not nil, replace ClusterSigningCA and -Key by
	// signer name (--cluster-signing-*-file; certificates.SignerConfig).
	ClusterSigners map[string]certificates.CA
	// ResourceQuotaSyncPeriod is --resource-quota-sync-period.
	ResourceQuotaSyncPeriod time.Duration

	GarbageCollectorWorkers    int
	GarbageCollectorSyncPeriod time.Duration

	// StartDeferred, if not nil, holds back the controllers that do not
	// gate Ready (the collector, quota, token and CSR controllers) until
	// it is closed; the server closes it once it is ready. Upstream's
	// kube-controller-manager is a process of its own that starts them
	// against a serving API server; here, started with the server, the
	// collector's informers (one list and watch per resource) took about
	// 40% of the CPU of a start, competing with the bootstrap writes that
	// readiness waits for. nil starts every controller at once.
	StartDeferred <-chan struct{}
}

// LeaderElection is kube-controller-manager's leader election
// configuration (--leader-elect*).
type LeaderElection struct {
	Enabled       bool
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// Name and Namespace name the Lease.
	Name      string
	Namespace string
	// Identity is this candidate's holder identity; empty: the host name
	// and a random UUID, as kube-controller-manager's.
	Identity string
	// ExclusiveStorage says no other server can share this server's
	// storage (embedded etcd or memory): a Lease held by another identity
	// at start is then a previous run's, and is removed instead of waited
	// out (up to LeaseDuration after a crash).
	ExclusiveStorage bool
}

// controller is one controller the manager runs while it leads.
type controller interface {
	// Run runs until ctx ends and returns once all it started has ended.
	Run(ctx context.Context)
	// HasSynced reports whether its caches are filled and it works.
	HasSynced() bool
}

// syncNotifier is a controller that tells when HasSynced becomes true.
type syncNotifier interface {
	// Synced is closed when HasSynced becomes true.
	Synced() <-chan struct{}
}

// controllerContext is what controllers are built from, anew for each
// leadership.
type controllerContext struct {
	cfg        *Config
	client     kubernetes.Interface
	namespaces coreinformers.NamespaceInformer
	// csrs is the one CSR informer the three CSR controllers share.
	csrs certinformers.CertificateSigningRequestInformer
	// factory holds the informers controllers share (upstream's
	// controller manager's one factory).
	factory informers.SharedInformerFactory
	logger  *slog.Logger
}

type descriptor struct {
	name              string
	disabledByDefault bool
	// gatesReady: Ready waits for this controller to sync (the per-namespace
	// defaults, which clients wait for; not the collector, whose first sync
	// lists every object).
	gatesReady bool
	// new returns nil, nil when the controller cannot run in this
	// configuration (logged).
	new func(cc *controllerContext) (controller, error)
}

var descriptors = []descriptor{
	{
		name: GarbageCollectorController,
		new: func(cc *controllerContext) (controller, error) {
			return garbagecollector.New(garbagecollector.Config{
				Client:     cc.cfg.Client,
				Logger:     cc.logger,
				Workers:    cc.cfg.GarbageCollectorWorkers,
				SyncPeriod: cc.cfg.GarbageCollectorSyncPeriod,
			})
		},
	},
	{
		name:       ServiceAccountController,
		gatesReady: true,
		new: func(cc *controllerContext) (controller, error) {
			return serviceaccount.New(cc.client, cc.namespaces, cc.logger)
		},
	},
	{
		name:       RootCACertificatePublisherController,
		gatesReady: true,
		new: func(cc *controllerContext) (controller, error) {
			if len(cc.cfg.RootCA) == 0 {
				cc.logger.Warn("not publishing kube-root-ca.crt: the CA clients verify this server with is unknown (--tls-cert-file without its issuer)")
				return nil, nil
			}
			return rootcacertpublisher.New(cc.client, cc.namespaces, cc.cfg.RootCA, cc.logger)
		},
	},
	{
		name: ServiceAccountTokenController,
		new: func(cc *controllerContext) (controller, error) {
			if cc.cfg.LegacyTokens == nil {
				cc.logger.Warn("not filling in service account token secrets: no token issuer")
				return nil, nil
			}
			return serviceaccounttoken.New(cc.client, cc.cfg.LegacyTokens, cc.cfg.RootCA, cc.logger)
		},
	},
	{
		name: CertificateSigningRequestSigningController,
		new: func(cc *controllerContext) (controller, error) {
			if cc.cfg.ClusterSigners == nil && (cc.cfg.ClusterSigningCA == nil || cc.cfg.ClusterSigningKey == nil) {
				cc.logger.Warn("not signing certificate signing requests: no cluster signing CA")
				return nil, nil
			}
			return certificates.NewSigner(cc.client, cc.csrs, certificates.SignerConfig{
				CA: cc.cfg.ClusterSigningCA, Key: cc.cfg.ClusterSigningKey, Signers: cc.cfg.ClusterSigners,
				Duration: cc.cfg.ClusterSigningDuration, Logger: cc.logger,
			})
		},
	},
	{
		name: CertificateSigningRequestApprovingController,
		new: func(cc *controllerContext) (controller, error) {
			return certificates.NewApprover(cc.client, cc.csrs, cc.logger)
		},
	},
	{
		name: ResourceQuotaController,
		new: func(cc *controllerContext) (controller, error) {
			return resourcequota.New(resourcequota.Config{Client: cc.cfg.Client, ResyncPeriod: cc.cfg.ResourceQuotaSyncPeriod, Logger: cc.logger})
		},
	},
	{
		name: PersistentVolumeClaimProtectionController,
		new: func(cc *controllerContext) (controller, error) {
			core := cc.factory.Core().V1()
			return volumeprotection.NewPVC(cc.client, core.PersistentVolumeClaims(), core.Pods(), cc.logger)
		},
	},
	{
		name: PersistentVolumeProtectionController,
		new: func(cc *controllerContext) (controller, error) {
			return volumeprotection.NewPV(cc.client, cc.factory.Core().V1().PersistentVolumes(), cc.logger)
		},
	},
	{
		name: VolumeAttributesClassProtectionController,
		new: func(cc *controllerContext) (controller, error) {
			core := cc.factory.Core().V1()
			return volumeprotection.NewVAC(cc.client, core.PersistentVolumeClaims(), core.PersistentVolumes(),
				cc.factory.Storage().V1().VolumeAttributesClasses(), cc.logger)
		},
	},
	{
		name: CertificateSigningRequestCleanerController,
		new: func(cc *controllerContext) (controller, error) {
			return certificates.NewCleaner(cc.client, cc.csrs, cc.logger, 0)
		},
	},
}

// Manager runs the enabled controllers while it leads.
type Manager struct {
	cfg      Config
	logger   *slog.Logger
	identity string
	leader   *prometheus.GaugeVec

	readyOnce sync.Once
	ready     chan struct{}
}

// New validates c and returns a manager; nothing runs before Run.
func New(c Config) (*Manager, error) {
	if c.Client == nil {
		return nil, errors.New("controller manager: Client is required")
	}
	if c.Controllers == nil {
		c.Controllers = []string{"*"}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	le := &c.LeaderElection
	if le.Enabled {
		if le.Name == "" || le.Namespace == "" {
			return nil, errors.New("controller manager: the leader election Lease needs a name and a namespace")
		}
		if le.LeaseDuration <= le.RenewDeadline || float64(le.RenewDeadline) <= leaderelection.JitterFactor*float64(le.RetryPeriod) {
			return nil, fmt.Errorf("controller manager: leader election needs lease duration (%v) > renew deadline (%v) > %.1f × retry period (%v)",
				le.LeaseDuration, le.RenewDeadline, leaderelection.JitterFactor, le.RetryPeriod)
		}
	}
	m := &Manager{cfg: c, logger: c.Logger.With("component", "controller-manager"), identity: le.Identity, ready: make(chan struct{})}
	if m.identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("controller manager identity: %w", err)
		}
		m.identity = host + "_" + uuid.NewString()
	}
	if c.Registerer != nil {
		// kube-controller-manager's metric (component-base
		// metrics/prometheus/clientgo/leaderelection).
		m.leader = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "leader_election_master_status",
			Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
		}, []string{"name"})
		if err := c.Registerer.Register(m.leader); err != nil {
			return nil, fmt.Errorf("controller manager metrics: %w", err)
		}
		if le.Enabled {
			m.leader.WithLabelValues(le.Name).Set(0)
		}
	}
	return m, nil
}

// Identity is this candidate's holder identity in the Lease.
func (m *Manager) Identity() string { return m.identity }

// Ready is closed once this server either runs its controllers with the
// per-namespace ones synced, or saw another server hold the Lease (it
// follows), or has no controller to run.
func (m *Manager) Ready() <-chan struct{} { return m.ready }

func (m *Manager) markReady() { m.readyOnce.Do(func() { close(m.ready) }) }

func (m *Manager) enabled() []descriptor {
	var out []descriptor
	for _, d := range descriptors {
		if Enabled(d.name, m.cfg.Controllers) {
			out = append(out, d)
		}
	}
	return out
}

// Run runs until ctx ends: with leader election, campaigns and runs the
// controllers while leading; without, runs them. It returns once the
// controllers stopped and (with leader election) the Lease was released.
func (m *Manager) Run(ctx context.Context) {
	if len(m.enabled()) == 0 {
		m.logger.Info("no controller enabled")
		m.markReady()
		<-ctx.Done()
		return
	}
	client, err := lazy.NewForConfig(m.cfg.Client)
	if err != nil {
		m.logger.Error("controller manager client", "err", err)
		m.markReady()
		<-ctx.Done()
		return
	}
	if !m.cfg.LeaderElection.Enabled {
		m.runControllers(ctx, client)
		return
	}
	if !m.waitForNamespace(ctx, client) {
		return
	}
	if m.cfg.LeaderElection.ExclusiveStorage {
		m.removeStaleLease(ctx, client)
	}
	for ctx.Err() == nil {
		m.campaign(ctx, client)
	}
}

// waitForNamespace waits until the Lease's namespace exists (kube-system
// is created by a post-start hook running beside this one), so that the
// first attempt to take the Lease does not fail and wait a retry period.
func (m *Manager) waitForNamespace(ctx context.Context, client kubernetes.Interface) bool {
	ns := m.cfg.LeaderElection.Namespace
	start := time.Now()
	warned := false
	delay := 10 * time.Millisecond
	for {
		_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err == nil {
			return true
		}
		if !warned && time.Since(start) > 10*time.Second {
			m.logger.Warn("waiting for the leader election namespace", "namespace", ns, "err", err)
			warned = true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(delay):
		}
		delay = min(2*delay, m.cfg.LeaderElection.RetryPeriod)
	}
}

// removeStaleLease deletes a Lease held by another identity: with
// exclusive storage it can only be a previous run's.
func (m *Manager) removeStaleLease(ctx context.Context, client kubernetes.Interface) {
	le := m.cfg.LeaderElection
	leases := client.CoordinationV1().Leases(le.Namespace)
	lease, err := leases.Get(ctx, le.Name, metav1.GetOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			m.logger.Warn("reading the leader election lease", "err", err)
		}
		return
	}
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	if holder == "" || holder == m.identity {
		return
	}
	uid := lease.UID
	err = leases.Delete(ctx, le.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		m.logger.Warn("removing a previous run's leader election lease", "holder", holder, "err", err)
		return
	}
	m.logger.Info("removed a previous run's leader election lease", "lease", le.Namespace+"/"+le.Name, "holder", holder)
}

// campaign runs one leader election: it returns when the leadership it
// won ended (lost, or ctx ended), after the controllers stopped.
func (m *Manager) campaign(ctx context.Context, client kubernetes.Interface) {
	le := m.cfg.LeaderElection
	leading := make(chan context.Context, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: le.Namespace, Name: le.Name},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: m.identity},
		},
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            le.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) { leading <- lctx },
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				if identity != m.identity && identity != "" {
					m.logger.Info("following the leader", "leader", identity)
					m.markReady()
				}
			},
		},
	})
	if err != nil {
		// The config was validated in New.
		m.logger.Error("leader election", "err", err)
		<-ctx.Done()
		return
	}
	// The election runs on a context of its own, cancelled only after the
	// controllers stopped: cancelling it releases the Lease.
	electionCtx, cancelElection := context.WithCancel(context.WithoutCancel(ctx))
	// The elector logs through klog.FromContext: to this server's logger,
	// with the candidate's identity, rather than the process's klog (the
	// same for every server of a process, without telling whose Lease
	// renewal failed).
	electionCtx = klog.NewContext(electionCtx, logr.FromSlogHandler(m.logger.Handler()).WithValues("identity", m.identity))
	defer cancelElection()
	elected := make(chan struct{})
	go func() {
		defer close(elected)
		elector.Run(electionCtx)
	}()
	select {
	case lctx := <-leading:
		m.logger.Info("became leader", "lease", le.Namespace+"/"+le.Name, "identity", m.identity)
		m.setLeader(1)
		runCtx, cancel := context.WithCancel(lctx)
		stop := context.AfterFunc(ctx, cancel)
		m.runControllers(runCtx, client)
		stop()
		cancel()
		m.setLeader(0)
		if ctx.Err() == nil {
			m.logger.Warn("leadership lost", "lease", le.Namespace+"/"+le.Name)
		}
	case <-ctx.Done():
	case <-elected:
	}
	cancelElection()
	<-elected
}

func (m *Manager) setLeader(v float64) {
	if m.leader != nil {
		m.leader.WithLabelValues(m.cfg.LeaderElection.Name).Set(v)
	}
}

// runControllers builds the enabled controllers and runs them until ctx
// ends.
func (m *Manager) runControllers(ctx context.Context, client kubernetes.Interface) {
	factory := informers.NewSharedInformerFactory(client, 0)
	defer factory.Shutdown()
	cc := &controllerContext{cfg: &m.cfg, client: client, namespaces: factory.Core().V1().Namespaces(),
		csrs: factory.Certificates().V1().CertificateSigningRequests(), factory: factory}
	type running struct {
		descriptor
		c controller
	}
	// build makes the enabled controllers that gate Ready (gating) or
	// the others; their informers start with the next factory.Start.
	build := func(gating bool) []running {
		var out []running
		for _, d := range m.enabled() {
			if d.gatesReady != gating {
				continue
			}
			cc.logger = m.cfg.Logger.With("controller", d.name)
			c, err := d.new(cc)
			if err != nil {
				m.logger.Error("cannot start controller", "controller", d.name, "err", err)
				continue
			}
			if c == nil {
				continue
			}
			out = append(out, running{d, c})
		}
		return out
	}
	var wg sync.WaitGroup
	start := func(rs []running) {
		// With the context, not ctx.Done(): each context an informer
		// derives from a channel's context (not a cancelCtx) costs a
		// goroutine waiting for it.
		factory.StartWithContext(ctx)
		for _, r := range rs {
			wg.Go(func() { r.c.Run(ctx) })
		}
	}
	ctrls := build(true)
	start(ctrls)
	m.logger.Info("started controllers", "count", len(ctrls))
	// The others once StartDeferred is closed (see Config). This
	// goroutine is counted in wg until it has added theirs.
	wg.Go(func() {
		if m.cfg.StartDeferred != nil {
			select {
			case <-ctx.Done():
				return
			case <-m.cfg.StartDeferred:
			}
		}
		others := build(false)
		start(others)
		m.logger.Info("started controllers", "count", len(others))
	})
	// Ready once the controllers that gate it have synced: notified by
	// those that tell (Synced), polled every 10 ms for the others.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		var pending <-chan struct{}
		synced := true
		for _, r := range ctrls {
			if r.gatesReady && !r.c.HasSynced() {
				synced = false
				if n, ok := r.c.(syncNotifier); ok && pending == nil {
					pending = n.Synced()
				}
			}
		}
		if synced {
			m.markReady()
			break
		}
		select {
		case <-ctx.Done():
		case <-pending:
		case <-tick.C:
		}
	}
	<-ctx.Done()
	wg.Wait()
}
