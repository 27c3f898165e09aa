package app

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	goruntime "runtime"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kapi-dev/kapi/internal/bootimage"
	"github.com/kapi-dev/kapi/internal/startheap"
	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/podsecurity"
	"github.com/kapi-dev/kapi/pkg/admission/webhook"
	apiextensionsserver "github.com/kapi-dev/kapi/pkg/apiextensions"
	apiextensionscel "github.com/kapi-dev/kapi/pkg/apiextensions/cel"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/kubeconfig"
	"github.com/kapi-dev/kapi/pkg/auth/node"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/auth/requestheader"
	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/accessreview"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/features"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol"
	"github.com/kapi-dev/kapi/pkg/server/healthz"
	"github.com/kapi-dev/kapi/pkg/server/options"
	"github.com/kapi-dev/kapi/pkg/storage/datadir"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
	"github.com/kapi-dev/kapi/pkg/version"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// Config is everything the server chain is built from: the generic server
// config shared by the three servers, plus what only the app knows.
type Config struct {
	Options CompletedOptions
	Logger  *slog.Logger
	Generic *server.Config

	// Address is the host:port the listener got.
	Address string
	// CAPEM is the CA that clients verify the serving certificate with:
	// kapi's CA, or with --tls-cert-file the CA certificates chained after
	// the leaf in that file (see pki.ServingTrust); nil when the issuer of
	// a user's certificate is unknown (clients then use system roots).
	CAPEM []byte
	// ClusterCA and ClusterCAKey are the generated cluster CA, which
	// client certificates are verified with and the CSR signer signs
	// with.
	ClusterCA    *x509.Certificate
	ClusterCAKey crypto.Signer
	// caSource says where CAPEM came from, for the log.
	caSource string
	// LoopbackToken authenticates the server's own clients as
	// system:apiserver in system:masters.
	LoopbackToken string
	// APIServerID is the server's identity: the name of its identity
	// Lease in kube-system (set when the chain is built).
	APIServerID string
	// flowControl is the API Priority and Fairness engine (nil: off).
	flowControl *flowcontrol.Controller
	// requests counts the non-long-running requests in flight (the
	// drain's wait group; kapitest's Reset waits on its barrier).
	requests *filters.SafeWaitGroup

	Authenticator authenticator.Request
	// authn holds the token authenticators, the service-account token
	// issuer and issuer discovery (see applyAuthentication).
	authn *authentication
	// ProxyClientCert is the client certificate the aggregator presents
	// to aggregated API servers (--proxy-client-cert-file or the
	// generated front-proxy-client certificate).
	ProxyClientCert *tls.Certificate
	// RequestHeader is the front-proxy authentication this server
	// accepts (--requestheader-* flags).
	RequestHeader requestheader.Config
	// ClientCAPEM is the PEM of the CAs client certificates are verified
	// against (--client-ca-file and the generated CA).
	ClientCAPEM []byte
	// Authorizer decides every request (the filter chain's, and the access
	// reviews').
	Authorizer authorizer.Authorizer
	// RBAC is the RBAC authorizer and rule resolver; RuleResolver lists
	// the rules of the --authorization-mode chain (see buildAuthorizer).
	RBAC         *rbac.Authorizer
	RuleResolver accessreview.RuleResolver
	// NodeGraph is the Node authorizer's relationships (nil without it).
	NodeGraph *node.Graph
	// RequestHeaderCAPEM is the PEM of the front-proxy CA trusted (the
	// generated one unless --requestheader-client-ca-file is set).
	RequestHeaderCAPEM []byte
	// Metrics are the request metrics of the chain; AdmissionMetrics,
	// AuditMetrics and StorageMetrics those of admission, audit and
	// storage. All live on Generic.MetricsRegistry.
	Metrics          *metrics.Metrics
	AdmissionMetrics *admission.Metrics
	WebhookMetrics   *webhook.Metrics
	// WebhookX509 are upstream's apiserver_webhooks_x509_* counters, shared
	// by every webhook client (admission, conversion, authorization,
	// audit).
	WebhookX509 *x509metrics.Counters
	// PodSecurityMetrics are upstream's pod_security_* metrics.
	PodSecurityMetrics *podsecurity.Metrics
	// CRDOpenAPIMetrics are apiextensions-apiserver's
	// apiextensions_openapi_v{2,3}_regeneration_count.
	CRDOpenAPIMetrics *apiextensionsserver.OpenAPIMetrics
	// CELMetrics are the CEL compilation and evaluation and the CRD
	// validation ratcheting families.
	CELMetrics *apiextensionscel.Metrics
	// AllocatorMetrics are upstream's kube_apiserver_clusterip_allocator_*
	// and kube_apiserver_nodeport_allocator_* metrics.
	AllocatorMetrics *allocator.Metrics
	// Admission is the admission chain of all three servers (as upstream,
	// where the servers share one generic config's admission); the core
	// server sets its plugins once their dependencies exist.
	Admission      admission.Chain
	AuditMetrics   *audit.Metrics
	StorageMetrics *storagemetrics.Metrics
	// Discovery holds the group-versions of the whole chain.
	Discovery *discovery.Manager

	storage *storageBundle
	// cluster is this server as a member of a clustered embedded etcd
	// (nil: not clustered).
	cluster *clusterMember
	// services resolves Service references once the core server is
	// installed.
	services *serviceResolver
	// customResources are the CRD server's served versions, for
	// admission's matchPolicy Equivalent.
	customResources apiextensionsserver.CustomResources
	// inProcess serves the bootstrap writers' and controllers' requests
	// through the head's handler chain without a connection (set once
	// the head exists).
	inProcess *inProcessTransport
	// head is the head of the chain (set once it exists).
	head *server.GenericServer
	// cleanups run, in reverse, when the chain is destroyed or building
	// fails.
	cleanups []func()
	// files writes the generated files (Options.DeferFileWrites).
	files *fileWriter
	// adminClientConfig makes the client config of the admin kubeconfig
	// (see AdminClientConfig).
	adminClientConfig func() (*rest.Config, error)
	// loopback tracks the loopback clients' connections (loopbackconns.go).
	loopback loopbackState
}

func (c *Config) addCleanup(fn func()) { c.cleanups = append(c.cleanups, fn) }

func (c *Config) cleanup() {
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		c.cleanups[i]()
	}
	c.cleanups = nil
}

// Run builds the chain, prepares it and runs it until ctx is cancelled
// (lifecycle.md 4). It returns nil after a clean termination, once
// everything the run started has stopped.
func Run(ctx context.Context, o CompletedOptions) error {
	var image func() (map[string][]byte, error)
	if o.BootstrapImage && o.Storage.Backend == "memory" {
		image = bootimage.StartDefault() // overlaps NewConfig
	}
	cfg, err := NewConfig(o)
	if err != nil {
		return err
	}
	if image != nil {
		if err := cfg.seed(image); err != nil {
			cfg.cleanup()
			return err
		}
	}
	head, err := CreateServerChain(cfg)
	if err != nil {
		cfg.cleanup()
		return err
	}
	stop := make(chan struct{})
	defer close(stop)
	// The kapi binary's start-up GC regime (package startheap; nothing
	// elsewhere) ends 100 ms after ready, so that the collection it
	// starts does not delay the first 200 from /readyz.
	go whenReady(head.LifecycleSignals().HasBeenReady.Signaled(), head.PostStartHooksFinished(), stop, 100*time.Millisecond, startheap.Ready)
	return head.PrepareRun().Run(ctx)
}

// whenReady calls fn once the server is ready: afterReady after the first
// 200 from /readyz, or, when nothing asks /readyz, a second after the
// post-start hooks finished, whichever comes first; not at all if stop is
// closed first.
func whenReady(ready, hooksFinished, stop <-chan struct{}, afterReady time.Duration, fn func()) {
	var after <-chan time.Time
	for {
		select {
		case <-ready:
			ready, after = nil, time.After(afterReady)
		case <-hooksFinished:
			hooksFinished = nil
			if after == nil {
				after = time.After(time.Second)
			}
		case <-after:
			fn()
			return
		case <-stop:
			return
		}
	}
}

// NewLogger builds the process logger: text lines on stderr, debug from -v 1.
func NewLogger(verbosity int) *slog.Logger {
	level := slog.LevelInfo
	if verbosity > 0 {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// NewConfig turns options into a config: it binds the listener (so a port
// in use fails here, lifecycle.md 5), loads or generates the PKI, writes the
// admin kubeconfig, starts storage and builds the generic config.
func NewConfig(o CompletedOptions) (_ *Config, retErr error) {
	logger := o.Logger
	if logger == nil {
		logger = NewLogger(o.Verbosity)
	}
	// One server per data dir: the lock comes before anything reads or
	// writes a file there (PKI, kubeconfig, etcd), and is released last.
	lock, err := datadir.Acquire(o.DataDir)
	if err != nil {
		return nil, err
	}
	logRuntime(logger)
	applyAuthorizationToAnonymous(o, logger)

	c := &Config{Options: o, Logger: logger}
	c.addCleanup(func() {
		if err := lock.Release(); err != nil {
			logger.Warn("releasing the data dir lock", "dataDir", o.DataDir, "err", err)
		}
	})
	// Registered after the lock's release, so run before it: nothing is
	// left writing into the data dir once the config is released.
	c.files = newFileWriter()
	c.addCleanup(func() { _ = c.files.wait() })
	defer func() {
		if retErr != nil {
			c.cleanup()
		}
	}()

	g := server.NewConfig(logger)
	g.LifecycleSignals = server.NewLifecycleSignals(logger, o.OnLifecycleSignal)
	g.ShutdownDelayDuration = o.Run.ShutdownDelayDuration
	g.ShutdownSendRetryAfter = o.Run.ShutdownSendRetryAfter
	g.ShutdownWatchTerminationGracePeriod = o.Run.ShutdownWatchTerminationGracePeriod
	g.RequestTimeout = o.Run.RequestTimeout
	g.LivezGracePeriod = o.Run.LivezGracePeriod
	g.EnableProfiling = o.Run.EnableProfiling
	if o.Run.EnableProfiling && o.Run.EnableContentionProfiling {
		goruntime.SetBlockProfileRate(1)
	}
	v := version.Get()
	g.Version = &v
	g.MetricsRegistry = prometheus.NewRegistry()
	// As every Kubernetes component (component-base legacyregistry): the
	// process, all of the Go runtime's metrics (made on the first scrape:
	// see lazyGoCollector), and the version metrics.
	g.MetricsRegistry.MustRegister(newLazyGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		server.NewVersionCollector(func() *apimachineryversion.Info { return g.Version },
			fmt.Sprintf("%d.%d.%d", version.KubeMajor, version.KubeMinor, version.KubePatch)))
	// --disabled-metrics and the label allow-lists, applied to what
	// /metrics serves, with component-base's meta families.
	if g.MetricsGatherer, err = newMetricsFilter(o.Options, g.MetricsRegistry); err != nil {
		return nil, err
	}
	// The feature gates at their defaults, as kube-apiserver records them
	// at start.
	if err := features.RegisterMetrics(g.MetricsRegistry); err != nil {
		return nil, fmt.Errorf("feature metrics: %w", err)
	}
	hm, err := healthz.NewMetrics(g.MetricsRegistry)
	if err != nil {
		return nil, fmt.Errorf("health metrics: %w", err)
	}
	g.HealthMetrics = hm
	g.OnPostStartHookError = o.OnPostStartHookError
	if g.OnPostStartHookError == nil {
		g.OnPostStartHookError = func(name string, err error) {
			logger.Error("post-start hook failed", "hook", name, "err", err)
			os.Exit(255)
		}
	}
	c.Generic = g
	if c.Metrics, err = metrics.New(g.MetricsRegistry); err != nil {
		return nil, fmt.Errorf("request metrics: %w", err)
	}
	if c.AdmissionMetrics, err = admission.NewMetrics(g.MetricsRegistry); err != nil {
		return nil, fmt.Errorf("admission metrics: %w", err)
	}
	c.Admission = admission.NewChain(c.AdmissionMetrics)
	if c.PodSecurityMetrics, err = podsecurity.NewMetrics(g.MetricsRegistry); err != nil {
		return nil, fmt.Errorf("pod security metrics: %w", err)
	}
	if c.CRDOpenAPIMetrics, err = apiextensionsserver.NewOpenAPIMetrics(g.MetricsRegistry); err != nil {
		return nil, fmt.Errorf("CRD OpenAPI metrics: %w", err)
	}
	if c.CELMetrics, err = apiextensionscel.NewMetrics(g.MetricsRegistry); err != nil {
		return nil, fmt.Errorf("CEL metrics: %w", err)
	}
	if c.AllocatorMetrics, err = allocator.NewMetrics(g.MetricsRegistry); err != nil {
		return nil, fmt.Errorf("allocator metrics: %w", err)
	}
	if c.WebhookMetrics, err = webhook.NewMetrics(g.MetricsRegistry); err != nil {
		return nil, fmt.Errorf("admission webhook metrics: %w", err)
	}
	if c.AuditMetrics, err = audit.NewMetrics(g.MetricsRegistry); err != nil {
		return nil, fmt.Errorf("audit metrics: %w", err)
	}
	if c.WebhookX509, err = x509metrics.NewWebhookCounters(g.MetricsRegistry, logger); err != nil {
		return nil, err
	}

	// The log check flushes klog, which the k8s libraries log through.
	logCheck := healthz.NewLogHealthz(func() error { klog.Flush(); return nil }, nil)
	c.addCleanup(logCheck.Stop)
	g.HealthzChecks = append(g.HealthzChecks, logCheck)
	g.LivezChecks = append(g.LivezChecks, logCheck)
	g.ReadyzChecks = append(g.ReadyzChecks, logCheck)

	if err := c.applyCluster(); err != nil {
		return nil, err
	}
	if err := c.applySecureServing(); err != nil {
		return nil, err
	}
	if err := c.applyStorage(); err != nil {
		return nil, err
	}
	if err := c.applyHandlerChain(); err != nil {
		return nil, err
	}
	if err := c.startCluster(); err != nil {
		return nil, err
	}
	aggregations, err := discovery.NewAggregationCounter(c.Generic.MetricsRegistry)
	if err != nil {
		return nil, fmt.Errorf("discovery metrics: %w", err)
	}
	if c.Discovery, err = discovery.New(discovery.Config{Logger: logger, AggregationCount: aggregations}); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if !o.DeferFileWrites {
		if err := c.files.wait(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func logRuntime(logger *slog.Logger) {
	gogc := os.Getenv("GOGC")
	if gogc == "" {
		gogc = "100"
	}
	traceback := os.Getenv("GOTRACEBACK")
	if traceback == "" {
		traceback = "single"
	}
	logger.Info("starting kapi", "version", version.Get().GitVersion, "goVersion", runtime.Version())
	logger.Info("golang settings", "GOGC", gogc, "GOMAXPROCS", runtime.GOMAXPROCS(0), "GOTRACEBACK", traceback)
}

// applySecureServing binds the listener and sets up TLS, client
// authentication and the admin kubeconfig.
func (c *Config) applySecureServing() error {
	o := c.Options.SecureServing
	addr := net.JoinHostPort(o.BindAddress, strconv.Itoa(o.BindPort))
	ln, err := server.Listen(context.Background(), "tcp", addr, o.PermitPortSharing)
	if err != nil {
		return fmt.Errorf("failed to create listener: %w", err)
	}
	c.addCleanup(func() { _ = ln.Close() })
	c.Address = ln.Addr().String()
	minTLS, err := o.MinTLSVersion()
	if err != nil {
		return err
	}
	cipherSuites, err := o.CipherSuites()
	if err != nil {
		return fmt.Errorf("--tls-cipher-suites: %w", err)
	}
	for _, name := range o.InsecureCipherSuites() {
		// kube-apiserver's warning for the same choice.
		c.Logger.Warn("use of insecure cipher detected", "cipher", name)
	}

	host, _ := os.Hostname()
	hosts := []string{o.BindAddress, host}
	// In-cluster clients reach the server at the "kubernetes" Service's
	// ClusterIP, the first address of --service-cluster-ip-range, and
	// verify it (kube-apiserver puts it in its self-signed certificate).
	if cidr, err := c.Options.Services.ClusterIPPrefix(); err == nil {
		hosts = append(hosts, cidr.Addr().Next().String())
	}
	certDirErr := fmt.Sprintf("certificates in --cert-dir %s", o.CertDir)
	bundle, err := pki.Ensure(pki.Config{Dir: o.CertDir, Hosts: hosts, Logger: c.Logger, NoSync: c.Options.UnsafeNoFsync,
		Defer: c.deferFile(certDirErr, nil)})
	if err != nil {
		return fmt.Errorf("%s: %w", certDirErr, err)
	}
	serving := bundle.Serving
	clientCA := bundle.CAPool
	c.CAPEM = bundle.CAPEM
	c.ClientCAPEM = bundle.CAPEM
	c.ClusterCA, c.ClusterCAKey = bundle.CA, bundle.CAKey
	if o.TLSCertFile != "" {
		serving, err = pki.LoadServing(o.TLSCertFile, o.TLSPrivateKeyFile)
		if err != nil {
			return err
		}
		c.CAPEM, c.caSource = pki.ServingTrust(serving, bundle.CA)
	}
	if o.ClientCAFile != "" {
		pool, err := pki.LoadCAPool(o.ClientCAFile)
		if err != nil {
			return err
		}
		// The generated admin certificate keeps working beside the
		// user's CA, so the admin kubeconfig is always usable.
		clientCA = mergePools(pool, bundle.CA)
		userPEM, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return fmt.Errorf("--client-ca-file: %w", err)
		}
		c.ClientCAPEM = append(append(userPEM, '\n'), bundle.CAPEM...)
	}

	if err := c.applyFrontProxy(bundle); err != nil {
		return err
	}
	c.Generic.SecureServing = &server.SecureServingInfo{
		Listener: ln,
		Cert:     &serving,
		// The handshake asks for certificates of either CA (as upstream
		// unions --client-ca-file and --requestheader-client-ca-file):
		// Go clients, among others, only send a certificate whose issuer
		// the server names. Each authenticator checks its own CA.
		ClientCA:                     withPEM(clientCA, c.RequestHeaderCAPEM),
		MinTLSVersion:                minTLS,
		CipherSuites:                 cipherSuites,
		HTTP2MaxStreamsPerConnection: o.HTTP2MaxStreamsPerConnection,
		DisableHTTP2:                 o.DisableHTTP2Serving,
		OnTLSHandshakeError:          c.Metrics.TLSHandshakeError,
	}

	frontProxy, err := requestheader.New(c.RequestHeader)
	if err != nil {
		return fmt.Errorf("--requestheader-*: %w", err)
	}

	token, err := randomToken()
	if err != nil {
		return err
	}
	c.LoopbackToken = token
	// Front-proxy authentication comes first, as upstream orders it: a
	// proxy's certificate never authenticates as itself when it carries
	// a user in headers.
	if err := c.applyAuthentication(frontProxy, clientCA, token); err != nil {
		return err
	}

	// The admin client certificate is signed by kapi's CA, which the
	// client-certificate authenticator always trusts, so the kubeconfig
	// works with a serving certificate of the user's too.
	wrote := func() {
		if o.TLSCertFile == "" {
			c.Logger.Info("wrote admin kubeconfig", "path", c.Options.AdminKubeconfig)
		} else if c.CAPEM == nil {
			c.Logger.Warn("wrote admin kubeconfig without a certificate authority: --tls-cert-file holds no CA and its issuer is unknown, so clients verify the server against the system roots",
				"path", c.Options.AdminKubeconfig, "tlsCertFile", o.TLSCertFile)
		} else {
			c.Logger.Info("wrote admin kubeconfig", "path", c.Options.AdminKubeconfig, "certificateAuthority", c.caSource, "tlsCertFile", o.TLSCertFile)
		}
	}
	deferWrite := c.deferFile("write --admin-kubeconfig", wrote)
	adminServer, adminCA := "https://"+serverHost(c.Address), c.CAPEM
	c.adminClientConfig = func() (*rest.Config, error) {
		return kubeconfig.AdminRESTConfig(adminServer, adminCA, bundle.AdminCertPEM, bundle.AdminKeyPEM)
	}
	if err := kubeconfig.WriteAdminDeferred(c.Options.AdminKubeconfig, adminServer, c.CAPEM, bundle.AdminCertPEM, bundle.AdminKeyPEM, deferWrite); err != nil {
		return fmt.Errorf("write --admin-kubeconfig: %w", err)
	}
	if deferWrite == nil {
		wrote()
	}
	return nil
}

// applyFrontProxy sets up both sides of front-proxy authentication: the
// identity headers this server trusts (--requestheader-*, by default from
// the generated front-proxy CA) and the client certificate its aggregator
// presents to backends (--proxy-client-*, by default the generated one).
func (c *Config) applyFrontProxy(bundle *pki.Bundle) error {
	rh := c.Options.RequestHeader
	cfg := requestheader.DefaultConfig(bundle.FrontProxyCAPool)
	c.RequestHeaderCAPEM = bundle.FrontProxyCAPEM
	if rh.ClientCAFile != "" {
		pool, err := pki.LoadCAPool(rh.ClientCAFile)
		if err != nil {
			return err
		}
		pemBytes, err := os.ReadFile(rh.ClientCAFile)
		if err != nil {
			return fmt.Errorf("--requestheader-client-ca-file: %w", err)
		}
		cfg.ClientCA, c.RequestHeaderCAPEM = pool, pemBytes
		// With a CA of the user's, any name it signed is allowed unless
		// --requestheader-allowed-names says otherwise (as upstream).
		cfg.AllowedNames = nil
	}
	if len(rh.AllowedNames) > 0 {
		cfg.AllowedNames = rh.AllowedNames
	}
	cfg.UsernameHeaders = rh.UsernameHeaders
	cfg.UIDHeaders = rh.UIDHeaders
	cfg.GroupHeaders = rh.GroupHeaders
	cfg.ExtraHeaderPrefixes = rh.ExtraHeaderPrefixes
	c.RequestHeader = cfg

	proxy := bundle.ProxyClient
	if a := c.Options.Aggregator; a.ProxyClientCertFile != "" {
		var err error
		if proxy, err = pki.LoadProxyClient(a.ProxyClientCertFile, a.ProxyClientKeyFile); err != nil {
			return err
		}
	}
	c.ProxyClientCert = &proxy
	return nil
}

// serverHost is the address clients should dial: an unspecified bind
// address is reached through loopback.
func serverHost(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			host = "127.0.0.1"
		} else {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, port)
}

// withPEM returns a copy of pool with the certificates in pemBytes added.
func withPEM(pool *x509.CertPool, pemBytes []byte) *x509.CertPool {
	if len(pemBytes) == 0 {
		return pool
	}
	out := pool.Clone()
	out.AppendCertsFromPEM(pemBytes)
	return out
}

func mergePools(pool *x509.CertPool, extra *x509.Certificate) *x509.CertPool {
	out := pool.Clone()
	out.AddCert(extra)
	return out
}

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate loopback token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// The three servers of the chain, named as upstream names them.
const (
	AggregatorName    = "kube-aggregator"
	CoreName          = "kube-apiserver"
	APIExtensionsName = "apiextensions-apiserver"
)

// CreateServerChain builds the chain innermost-first: apiextensions in
// front of the not-found handler, the core server in front of it, the
// aggregator at the head (lifecycle.md 4). It returns the head.
func CreateServerChain(c *Config) (*server.GenericServer, error) {
	completed, err := c.Generic.Complete()
	if err != nil {
		return nil, err
	}
	notFound := server.NewEmptyDelegate(server.NotFoundHandler())
	c.services = &serviceResolver{}

	// The head serves the OpenAPI documents and discovery of the whole
	// chain; the servers add their parts.
	api := server.NewOpenAPI("Kubernetes", openapi.InfoVersion())
	api.SetBearerTokenSecurity(true) // service-account tokens always authenticate

	apiextensions, err := completed.New(APIExtensionsName, notFound)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", APIExtensionsName, err)
	}
	// Storage, the listener and the rest of the config are released last:
	// the innermost server's destroy functions run after the others', and
	// this one is registered before the CRD controller's.
	apiextensions.AddDestroyFunc(c.cleanup)
	if err := apiextensionsserver.Install(apiextensions, apiextensionsserver.Config{
		Admission:         c.Admission,
		Storage:           c.StorageFactory(),
		Discovery:         c.Discovery,
		OpenAPI:           api,
		MinRequestTimeout: time.Duration(c.Options.Run.MinRequestTimeout) * time.Second,
		// Conversion webhooks behind a Service resolve through the core
		// server's Services and EndpointSlices, once it is installed.
		ConversionServiceResolver: c.services,
		WebhookX509:               c.WebhookX509,
		CustomResources:           &c.customResources,
		Logger:                    c.Logger,
		Metrics:                   c.Metrics,
		OpenAPIMetrics:            c.CRDOpenAPIMetrics,
		CELMetrics:                c.CELMetrics,
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", APIExtensionsName, err)
	}

	core, err := completed.New(CoreName, apiextensions)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", CoreName, err)
	}
	if err := c.installCoreResources(core, api); err != nil {
		return nil, err
	}

	aggregator, err := completed.New(AggregatorName, core)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", AggregatorName, err)
	}
	if err := c.installAggregator(aggregator, api, c.services); err != nil {
		return nil, err
	}
	c.head = aggregator
	c.inProcess = newInProcessTransport(aggregator)
	if err := c.installRBAC(aggregator); err != nil {
		return nil, err
	}
	if err := c.installControllers(aggregator); err != nil {
		return nil, err
	}
	if err := c.installFlowControl(aggregator); err != nil {
		return nil, err
	}
	return aggregator, nil
}

// applyAuthorizationToAnonymous turns anonymous requests off when the
// AlwaysAllow authorizer is on, with kube-apiserver v1.37.2's warning
// (pkg/kubeapiserver/options/authentication.go, ApplyAuthorization):
// otherwise anyone who can reach the port could do anything. An
// --authentication-config file's anonymous section still decides, as
// upstream's replaces the flag's value.
func applyAuthorizationToAnonymous(o CompletedOptions, logger *slog.Logger) {
	if o.Authentication == nil || o.Authorization == nil || !o.Authentication.Anonymous {
		return
	}
	if slices.Contains(o.Authorization.Modes, options.ModeAlwaysAllow) {
		logger.Warn("AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer")
		o.Authentication.Anonymous = false
	}
}
