package kapitest

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/internal/bootimage"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/manager"
	"github.com/kapi-dev/kapi/pkg/controlplane/legacytokentracking"
	"github.com/kapi-dev/kapi/pkg/server/options"
)

// Server is a running kapi.
type Server struct {
	// Config has cluster-admin credentials for the server.
	Config *rest.Config
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
	// Address is the host:port the server listens on.
	Address string
	// Options are the options the server was started with.
	Options Options

	cancel   context.CancelFunc
	finished chan struct{} // closed when Run returned
	runErr   error         // what Run returned, once finished is closed
	stopOnce sync.Once
	// Once the server stopped listening and every non-long-running
	// request finished, Stop closes the client connections still open
	// (idle keep-alives, watches).
	stoppedListening, drained <-chan struct{}
	conns                     *connTracker

	certDir string  // the generated PKI (ca.crt, ca.key)
	storage kvStore // the chain's storage, read and written directly
	// inFlight waits for the requests in flight when called (see
	// app.Config.AwaitRequestsInFlight).
	inFlight func(context.Context) error
	baseline map[string][]byte // storage once ready and the CRDs installed
	seeded   bool              // started with the process's bootstrap image
	// expectedKeys are objects the server makes soon after Start's
	// installs (APIServices of CRD groups): the start state waits for
	// them.
	expectedKeys []string
	// noDefaultSA and noRootCA: this server's flags turn off the
	// controller making the default ServiceAccounts, or kube-root-ca.crt,
	// and no other server shares its storage: the settled state does
	// not wait for what will not come.
	noDefaultSA, noRootCA bool
	// serverOwnedKeys are objects the server makes and keeps for itself
	// at any time: Reset and Restore neither delete nor put them back.
	serverOwnedKeys []string
}

// Options are the settings of a test server, named here so that tests
// outside this module can set them. Start fills them with its defaults (a
// data directory of the test's own, a free loopback port, the memory
// backend); every field left at its zero value keeps kapi's default.
type Options struct {
	// DataDir holds the embedded etcd data, the generated PKI and the admin
	// kubeconfig (--data-dir).
	DataDir string
	// BindAddress is the address to listen on (--bind-address; kapi's
	// default 127.0.0.1).
	BindAddress string
	// SecurePort is the port to listen on (--secure-port); 0 picks a free
	// one.
	SecurePort int
	// CertDir holds the generated PKI (--cert-dir; <DataDir>/pki).
	CertDir string
	// StorageBackend is "memory" (kapitest's default) or "etcd3", the
	// embedded etcd in DataDir (--storage-backend).
	StorageBackend string
	// CompactionInterval is how often storage is compacted
	// (--etcd-compaction-interval; to turn compaction off, pass the flag
	// with 0 in Flags).
	CompactionInterval time.Duration
	// RequestHeaderClientCAFile is the front-proxy CA bundle
	// (--requestheader-client-ca-file).
	RequestHeaderClientCAFile string
	// AuditLogPath is where audit events are written (--audit-log-path).
	AuditLogPath string
	// CORSAllowedOrigins are the allowed origins (--cors-allowed-origins).
	CORSAllowedOrigins []string
	// HSTSDirectives are the Strict-Transport-Security directives
	// (--strict-transport-security-directives).
	HSTSDirectives []string
	// EventTTL is how long events are kept (--event-ttl).
	EventTTL time.Duration
	// ServiceClusterIPRange is the ClusterIP range of Services
	// (--service-cluster-ip-range).
	ServiceClusterIPRange string
	// APIServiceAvailabilityPeriod, if set, replaces how often the
	// aggregator re-probes an available non-local APIService (30s). A test
	// seam: there is no flag.
	APIServiceAvailabilityPeriod time.Duration
	// ConfigReloadInterval, if set, replaces how often the
	// --authorization-config and --authentication-config files are
	// checked for changes (a minute). A test seam: there is no flag.
	ConfigReloadInterval time.Duration
	// TokenCacheNow, if set, is the clock of the server's bearer-token
	// cache, which keeps a token that authenticated for 10s as
	// kube-apiserver's does: a test that revokes a token moves it past
	// that instead of sleeping. A test seam: there is no flag.
	TokenCacheNow func() time.Time
	// TokenSuccessCacheTTL, if set, replaces how long that cache keeps a
	// token that authenticated (negative: no cache), for benchmarks of
	// the cache. A test seam: there is no flag.
	TokenSuccessCacheTTL time.Duration
	// ConsistencyCheckPeriod, if set, replaces how often each watch cache
	// on etcd is checked against etcd (5 to 7.5 minutes; negative:
	// never). A test seam: there is no flag.
	ConsistencyCheckPeriod time.Duration
	// APFAdjustmentPeriod, if set, replaces how often API Priority and
	// Fairness adjusts the priority levels' seat limits and publishes
	// their seat demand statistics (10s). A test seam: there is no flag.
	APFAdjustmentPeriod time.Duration
	// Flags are more command-line flags, as the kapi command takes them
	// ("--name=value"), applied after the fields above.
	Flags []string
	// CRDInstall are CRDs installed once the server is ready; Start
	// returns when each is served (see WithCRDs).
	CRDInstall CRDInstallOptions
	// WebhookInstall, if set, are webhook configurations installed once
	// the server is ready (see WithWebhooks).
	WebhookInstall *WebhookInstallOptions
	// StartTimeout bounds the wait for the server to be ready (default
	// 60s; a busy machine with the race detector needs it).
	StartTimeout time.Duration
	// KubernetesVersion, if set ("v1.31.4"), is the version /version
	// reports (major, minor and gitVersion) instead of kapi's own.
	KubernetesVersion string
	// FsyncDataDir writes DataDir durably, as the kapi command does. By
	// default nothing under it is fsynced, as envtest runs its etcd
	// (--unsafe-no-fsync): the data survives Stop and a restart on the
	// same directory, not a crash of the machine.
	FsyncDataDir bool

	// coldBootstrap makes the server bootstrap from nothing even if the
	// process has an image of its options (see bootstrapImage).
	coldBootstrap bool
}

// Option changes the options before the server starts.
type Option func(*Options)

// WithEmbeddedEtcd runs on the default storage: embedded etcd in the
// test's temporary directory.
func WithEmbeddedEtcd() Option {
	return func(o *Options) { o.StorageBackend = "etcd3" }
}

// WithKubernetesVersion makes /version report v ("v1.31.4"): clients
// that check the server's version (discovery-based feature detection) see
// that version. Only the reported version changes: kapi serves its own
// APIs whatever it reports.
func WithKubernetesVersion(v string) Option {
	return func(o *Options) { o.KubernetesVersion = v }
}

// WithOptions lets a test change any option.
func WithOptions(fn func(*Options)) Option { return Option(fn) }

// WithFlags adds command-line flags (see Options.Flags).
func WithFlags(flags ...string) Option {
	return func(o *Options) { o.Flags = append(o.Flags, flags...) }
}

// appOptions turns o into the command's options.
func (o Options) appOptions(logger *slog.Logger) (*app.Options, error) {
	ao := app.NewOptions()
	ao.DataDir = o.DataDir
	ao.SecureServing.BindPort = o.SecurePort
	if o.BindAddress != "" {
		ao.SecureServing.BindAddress = o.BindAddress
	}
	if o.CertDir != "" {
		ao.SecureServing.CertDir = o.CertDir
	}
	if o.StorageBackend != "" {
		ao.Storage.Backend = o.StorageBackend
	}
	if o.CompactionInterval != 0 {
		ao.Storage.CompactionInterval = o.CompactionInterval
	}
	if o.RequestHeaderClientCAFile != "" {
		ao.RequestHeader.ClientCAFile = o.RequestHeaderClientCAFile
	}
	if o.AuditLogPath != "" {
		ao.Audit.LogPath = o.AuditLogPath
	}
	if o.CORSAllowedOrigins != nil {
		ao.Run.CORSAllowedOrigins = o.CORSAllowedOrigins
	}
	if o.HSTSDirectives != nil {
		ao.Run.HSTSDirectives = o.HSTSDirectives
	}
	if o.EventTTL != 0 {
		ao.Run.EventTTL = o.EventTTL
	}
	if o.ServiceClusterIPRange != "" {
		ao.Services.ClusterIPRange = o.ServiceClusterIPRange
	}
	ao.APIServiceAvailabilityPeriod = o.APIServiceAvailabilityPeriod
	ao.ConfigReloadInterval = o.ConfigReloadInterval
	ao.WatchCache.ConsistencyCheckPeriod = o.ConsistencyCheckPeriod
	ao.APFAdjustmentPeriod = o.APFAdjustmentPeriod
	ao.TokenCacheNow = o.TokenCacheNow
	ao.TokenSuccessCacheTTL = o.TokenSuccessCacheTTL
	ao.UnsafeNoFsync = !o.FsyncDataDir
	// Nobody can read the data dir's files before Start returns: they are
	// written while the server starts, and Start waits for them.
	ao.DeferFileWrites = true
	if len(o.Flags) > 0 {
		fs := pflag.NewFlagSet("kapi", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		ao.AddFlags(fs)
		if err := fs.Parse(o.Flags); err != nil {
			return nil, fmt.Errorf("kapitest flags: %w", err)
		}
		if fs.NArg() > 0 {
			return nil, fmt.Errorf("kapitest flags: unexpected arguments %q", fs.Args())
		}
	}
	ao.Logger = logger
	ao.OnPostStartHookError = func(name string, err error) {
		logger.Error("post-start hook failed", "hook", name, "err", err)
	}
	return ao, nil
}

// Start starts a server and waits until /readyz answers 200. The server is
// stopped when the test ends; a failure to stop cleanly fails the test.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	w := &testWriter{t: t}
	t.Cleanup(w.close) // registered first, so it runs after the server stopped
	s, err := StartE(t.TempDir(), slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})), opts...)
	if err != nil {
		t.Fatalf("start kapi: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop kapi: %v", err)
		}
	})
	return s
}

// StartE is Start without a testing.TB: the caller stops the server. Logs
// go to logger (nil: discarded).
func StartE(dataDir string, logger *slog.Logger, opts ...Option) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	o := Options{DataDir: dataDir, StorageBackend: "memory"}
	for _, opt := range opts {
		opt(&o)
	}
	ao, err := o.appOptions(logger)
	if err != nil {
		return nil, err
	}
	completed, err := ao.Complete()
	if err != nil {
		return nil, err
	}
	var reported *utilversion.Version
	if o.KubernetesVersion != "" {
		if reported, err = utilversion.ParseSemantic(o.KubernetesVersion); err != nil {
			return nil, fmt.Errorf("kubernetes version %q: %w", o.KubernetesVersion, err)
		}
	}
	// A server of options the process already bootstrapped starts with
	// that bootstrap's objects (see bootstrapImage).
	imgKey, imageable := imageKeyOf(o)
	var image func() (map[string][]byte, error)
	if imageable {
		image = instantiateBootstrapImage(imgKey)
	}
	cfg, err := app.NewConfig(completed)
	if err != nil {
		if image != nil {
			_, _ = image()
		}
		return nil, err
	}
	if reported != nil {
		setVersion(cfg, reported)
	}
	seeded := false
	if image != nil {
		objs, err := image()
		mb := cfg.MemoryBackend()
		if err == nil && mb == nil {
			err = fmt.Errorf("bootstrap image: no memory storage")
		}
		if err == nil {
			err = bootimage.Seed(objs, mb)
		}
		if err != nil {
			cfg.Cleanup()
			return nil, err
		}
		seeded = true
	}
	conns := &connTracker{conns: map[net.Conn]struct{}{}}
	ss := cfg.Generic.SecureServing
	ss.Listener = &trackingListener{Listener: ss.Listener, t: conns}
	head, err := app.CreateServerChain(cfg)
	if err != nil {
		cfg.Cleanup()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	sig := head.LifecycleSignals()
	s := &Server{
		Options: o, Address: cfg.Address, Kubeconfig: completed.AdminKubeconfig,
		cancel: cancel, finished: make(chan struct{}), conns: conns,
		stoppedListening: sig.HTTPServerStoppedListening.Signaled(),
		drained:          sig.InFlightRequestsDrained.Signaled(),
		certDir:          completed.SecureServing.CertDir,
		seeded:           seeded,
	}
	s.inFlight = cfg.AwaitRequestsInFlight
	if exclusive := completed.Storage.Backend == options.StorageBackendMemory || len(completed.Storage.ServerList) == 0; exclusive {
		cs := completed.Controllers.Controllers
		s.noDefaultSA = !manager.Enabled(manager.ServiceAccountController, cs)
		s.noRootCA = !manager.Enabled(manager.RootCACertificatePublisherController, cs)
	}
	if mb := cfg.MemoryBackend(); mb != nil {
		s.storage = memoryKV{mb}
	} else {
		s.storage = etcdKV{client: cfg.StorageClient(), prefix: completed.Storage.Prefix}
	}
	// The objects kube-apiserver keeps in kube-system, made once the
	// server is ready: its identity Lease and the legacy token tracking
	// ConfigMap are the server's own, and Reset and Restore leave them as
	// they are (the ConfigMap would not be made again for half an hour).
	// Start does not wait for them: waiting cost every Start ~3 ms
	// (session 20), and kube-apiserver makes them after it is ready too.
	root := s.storage.root()
	s.serverOwnedKeys = []string{
		root + "/coordination.k8s.io/leases/kube-system/" + cfg.APIServerID,
		root + "/configmaps/kube-system/" + legacytokentracking.ConfigMapName}
	prepared := head.PrepareRun()
	go func() {
		defer close(s.finished)
		s.runErr = prepared.Run(ctx)
	}()

	// The per-namespace defaults are waited for before /readyz is first
	// asked: its first 200 starts the controllers readiness does not wait
	// for (the garbage collector's ~60 watches, the quota, token and CSR
	// controllers; app's StartDeferred), which otherwise compete on the
	// CPU with the two controllers making the defaults (traced at load
	// ~5: up to 15 ms of Start spent so). The final wait below then
	// finds them at once.
	defaultsMade := false
	awaitDefaults := func() {
		state, err := s.settledState(settleTimeout, true)
		defaultsMade = err == nil && s.settled(state, true)
	}
	if err := s.waitReady(head.Handler(), head.PostStartHooksFinished(), awaitDefaults, cfg.LoopbackToken, cmp.Or(o.StartTimeout, 60*time.Second)); err != nil {
		_ = s.Stop()
		return nil, err
	}
	// The PKI and the kubeconfig were written while the server started
	// (Options.DeferFileWrites); CertDir and Kubeconfig hold them from now.
	if err := cfg.AwaitFiles(); err != nil {
		_ = s.Stop()
		return nil, err
	}
	// What loading the admin kubeconfig gives, without reading it back
	// (TestStartConfigAsKubeconfig).
	s.Config, err = cfg.AdminClientConfig()
	if err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("load admin kubeconfig: %w", err)
	}
	// Client-side rate limits as envtest sets them for its admin config
	// (controller-runtime v0.25 pkg/envtest/server.go: QPS 1000, Burst
	// 2000), not client-go's default 5/s, which a test filling the server
	// would wait on.
	s.Config.QPS, s.Config.Burst = 1000, 2000
	if err := s.installCRDs(o.CRDInstall); err != nil {
		_ = s.Stop()
		return nil, err
	}
	if err := s.installWebhooks(o.WebhookInstall); err != nil {
		_ = s.Stop()
		return nil, err
	}
	// Without the defaults at settleTimeout (no CA to publish, the
	// controllers run by another server of the storage), the wait is for
	// the installed CRDs' APIServices only: the defaults had their time.
	if s.baseline, err = s.settledState(settleTimeout, defaultsMade); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("read storage: %w", err)
	}
	// Nothing but the server has written storage yet (the CRDs and webhooks
	// installed above would be in it: such a server makes no image).
	if imageable && !seeded && s.storage.root() == "" && len(o.CRDInstall.Paths) == 0 &&
		len(o.CRDInstall.CRDs) == 0 && o.WebhookInstall == nil {
		if err := keepBootstrapImage(imgKey, s.baseline); err != nil {
			logger.Warn("kapitest: no bootstrap image; later servers bootstrap from nothing", "err", err)
		}
	}
	return s, nil
}

// settleTimeout bounds the waits for the per-namespace defaults (see
// settledState).
const settleTimeout = 3 * time.Second

// settledState reads storage once the server's controllers have made the
// objects they make in every namespace at start (the default
// ServiceAccount, the kube-root-ca.crt ConfigMap; unless defaults is
// false; not those of a controller the flags turn off) and the expected
// keys exist: readiness does not wait for them, and Reset must not take
// them for the test's. It waits at most max (kube-root-ca.crt is not
// published when the server's CA is unknown; another server sharing the
// storage may run the controllers) or until the server exits, then reads
// storage as it is. On the memory backend it reads again at each write
// (they come within a millisecond or two of the last post-start hook); on
// etcd it polls every 2 ms.
func (s *Server) settledState(max time.Duration, defaults bool) (map[string][]byte, error) {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	notifier, notifies := s.storage.(interface {
		readChanges() (map[string][]byte, <-chan struct{}, error)
	})
	for {
		var state map[string][]byte
		var changed <-chan struct{}
		var poll <-chan time.Time
		var err error
		if notifies {
			state, changed, err = notifier.readChanges()
		} else {
			state, err = s.storage.read(context.Background())
			poll = time.After(2 * time.Millisecond)
		}
		if err != nil || s.settled(state, defaults) {
			return state, err
		}
		select {
		case <-changed:
		case <-poll:
		case <-s.finished:
			return state, fmt.Errorf("server exited: %v", s.runErr)
		case <-deadline.C:
			return s.storage.read(context.Background())
		}
	}
}

func (s *Server) settled(state map[string][]byte, defaults bool) bool {
	for _, k := range s.expectedKeys {
		if _, ok := state[k]; !ok {
			return false
		}
	}
	if !defaults {
		return true
	}
	root := s.storage.root()
	for k := range state {
		ns, ok := strings.CutPrefix(k, root+"/namespaces/")
		if !ok {
			continue
		}
		if _, ok := state[root+"/serviceaccounts/"+ns+"/default"]; !ok && !s.noDefaultSA {
			return false
		}
		if _, ok := state[root+"/configmaps/"+ns+"/kube-root-ca.crt"]; !ok && !s.noRootCA {
			return false
		}
	}
	return true
}

// setVersion makes /version report v.
func setVersion(cfg *app.Config, sv *utilversion.Version) {
	info := *cfg.Generic.Version
	info.Major = strconv.FormatUint(uint64(sv.Major()), 10)
	info.Minor = strconv.FormatUint(uint64(sv.Minor()), 10)
	info.GitVersion = "v" + sv.String()
	cfg.Generic.Version = &info
}

// waitReady asks /readyz in-process, through the server's whole handler
// chain (authenticated with the server's loopback token), until it answers
// 200. In-process, the check needs no TLS handshake, and leaves no client
// connection that the server's graceful shutdown would wait on.
//
// /readyz cannot pass before every post-start hook has returned (each is
// one of its checks): until hooksDone is closed the wait is for it, not a
// poll (a poll's sleep added up to 10 ms to a start); then beforeReadyz
// runs; after it, /readyz is asked again as its other checks (storage,
// informers) may lag.
func (s *Server) waitReady(h http.Handler, hooksDone <-chan struct{}, beforeReadyz func(), token string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	select {
	case <-hooksDone:
	case <-s.finished:
		return fmt.Errorf("server exited before ready: %v", s.runErr)
	case <-deadline.C:
		_, last := s.readyz(h, token)
		return fmt.Errorf("not ready within %v (post-start hooks not finished): last /readyz: %s", timeout, last)
	}
	beforeReadyz()
	for wait := 200 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		ok, last := s.readyz(h, token)
		if ok {
			return nil
		}
		select {
		case <-s.finished:
			return fmt.Errorf("server exited before ready: %v", s.runErr)
		case <-deadline.C:
			return fmt.Errorf("not ready within %v: last /readyz: %s", timeout, last)
		case <-time.After(wait):
		}
	}
}

// readyz asks /readyz once: true on 200, else the status and body.
func (s *Server) readyz(h http.Handler, token string) (bool, string) {
	req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
	req.RemoteAddr = "127.0.0.1:0"
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code == http.StatusOK, fmt.Sprintf("%d %s", rec.Code, rec.Body.Bytes())
}

// Stop shuts the server down as SIGTERM does (graceful termination) and
// waits for Run to return, with everything it started. Once the server
// stopped listening and its non-long-running requests drained, the client
// connections still open (idle keep-alives of the test's clients, watches)
// are closed rather than waited on: an idle HTTP/2 connection otherwise
// holds the server's shutdown for a second (the GOAWAY timeout).
// Idempotent: later calls return the same result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		go func() {
			for _, ch := range []<-chan struct{}{s.stoppedListening, s.drained} {
				select {
				case <-ch:
				case <-s.finished:
					return
				}
			}
			s.conns.closeAll()
		}()
	})
	select {
	case <-s.finished:
		return s.runErr
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("kapi did not stop within 2 minutes")
	}
}

// DataDir returns the server's data directory.
func (s *Server) DataDir() string { return filepath.Clean(s.Options.DataDir) }

// testWriter sends log lines to the test log until the test ends; lines
// from goroutines that outlive it are dropped rather than panicking.
type testWriter struct {
	t      testing.TB
	mu     sync.Mutex
	closed bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}
