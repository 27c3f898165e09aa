package app

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/server"
)

// The names kapi answers to when it stands in for envtest's binaries
// (issue 17): as argv[0]'s base name, or as a subcommand of kapi.
const (
	KubeAPIServerCommandName = "kube-apiserver"
	EtcdCommandName          = "etcd"
)

// NewCommandFor returns the command for the name the binary was invoked
// as: kube-apiserver and etcd run those modes, anything else is kapi.
func NewCommandFor(argv0 string) *cobra.Command {
	switch strings.TrimSuffix(filepath.Base(argv0), ".exe") {
	case KubeAPIServerCommandName:
		return NewKubeAPIServerCommand()
	case EtcdCommandName:
		return NewEtcdCommand()
	}
	return NewCommand()
}

// addEnvtestCommands adds the stand-in modes and the assets installer as
// subcommands of kapi.
func addEnvtestCommands(cmd *cobra.Command) {
	cmd.AddCommand(NewKubeAPIServerCommand(), NewEtcdCommand(), newInstallEnvtestAssetsCommand())
}

// ignoredKubeAPIServerFlags are kube-apiserver v1.37 flags kapi accepts in
// kube-apiserver mode without applying them: each one that is set is
// logged. A flag kapi implements itself (now or once another part adds it)
// is never in this set: it is registered only when the kapi flag set does
// not define it. The list covers every flag controller-runtime's envtest
// passes by default (pkg/internal/testing/controlplane/apiserver.go,
// v0.25: defaultArgs and APIServerDefaultArgs) and the kube-apiserver flags
// envtest users commonly add; names from kube-apiserver --help, v1.37.
var ignoredKubeAPIServerFlags = map[string]bool{ // name -> is a bool flag
	"advertise-address":                            false,
	"allow-privileged":                             true,
	"anonymous-auth":                               true,
	"api-audiences":                                false,
	"apiserver-count":                              false,
	"authentication-config":                        false,
	"authentication-token-webhook-cache-ttl":       false,
	"authentication-token-webhook-config-file":     false,
	"authentication-token-webhook-version":         false,
	"authorization-config":                         false,
	"authorization-mode":                           false,
	"authorization-policy-file":                    false,
	"authorization-webhook-cache-authorized-ttl":   false,
	"authorization-webhook-cache-unauthorized-ttl": false,
	"authorization-webhook-config-file":            false,
	"authorization-webhook-version":                false,
	"admission-control-config-file":                false,
	"allow-metric-labels":                          false,
	"default-not-ready-toleration-seconds":         false,
	"default-unreachable-toleration-seconds":       false,
	"default-watch-cache-size":                     false,
	"delete-collection-workers":                    false,
	"disable-admission-plugins":                    false,
	"egress-selector-config-file":                  false,
	"emulated-version":                             false,
	"enable-admission-plugins":                     false,
	"enable-aggregator-routing":                    true,
	"enable-bootstrap-token-auth":                  true,
	"enable-garbage-collector":                     true,
	"enable-priority-and-fairness":                 true,
	"encryption-provider-config":                   false,
	"endpoint-reconciler-type":                     false,
	"external-hostname":                            false,
	"feature-gates":                                false,
	"kubelet-certificate-authority":                false,
	"kubelet-client-certificate":                   false,
	"kubelet-client-key":                           false,
	"kubelet-preferred-address-types":              false,
	"kubelet-timeout":                              false,
	"logging-format":                               false,
	"oidc-ca-file":                                 false,
	"oidc-client-id":                               false,
	"oidc-groups-claim":                            false,
	"oidc-issuer-url":                              false,
	"oidc-username-claim":                          false,
	"profiling":                                    true,
	"runtime-config":                               false,
	"service-account-extend-token-expiration":      true,
	"service-account-issuer":                       false,
	"service-account-jwks-uri":                     false,
	"service-account-key-file":                     false,
	"service-account-lookup":                       true,
	"service-account-max-token-expiration":         false,
	"service-account-signing-key-file":             false,
	"service-node-port-range":                      false,
	"storage-media-type":                           false,
	"token-auth-file":                              false,
	"tracing-config-file":                          false,
	"watch-cache":                                  true,
	"watch-cache-sizes":                            false,
	"requestheader-allowed-names":                  false,
	"proxy-client-cert-file":                       false,
	"proxy-client-key-file":                        false,
	"service-account-signing-endpoint":             false,
	"enable-logs-handler":                          true,
	"log-flush-frequency":                          false,
	"kubernetes-service-node-port":                 false,
	"max-connection-bytes-per-sec":                 false,
	"strict-transport-security-directives":         false,
	"etcd-compaction-interval":                     false,
	"etcd-count-metric-poll-period":                false,
	"etcd-db-metric-poll-interval":                 false,
	"etcd-healthcheck-timeout":                     false,
	"etcd-readycheck-timeout":                      false,
	"etcd-prefix":                                  false,
	"etcd-cafile":                                  false,
	"etcd-certfile":                                false,
	"etcd-keyfile":                                 false,
	"etcd-servers-overrides":                       false,
	"lease-reuse-duration-seconds":                 false,
	"event-ttl":                                    false,
	"audit-log-maxage":                             false,
	"audit-log-maxbackup":                          false,
	"audit-log-maxsize":                            false,
	"audit-log-format":                             false,
	"audit-policy-file":                            false,
	"audit-webhook-config-file":                    false,
	"goaway-chance":                                false,
	"livez-grace-period":                           false,
	"min-request-timeout":                          false,
	"request-timeout":                              false,
	"shutdown-delay-duration":                      false,
	"shutdown-send-retry-after":                    true,
	"shutdown-watch-termination-grace-period":      false,
	"max-requests-inflight":                        false,
	"max-mutating-requests-inflight":               false,
	"cors-allowed-origins":                         false,
	"tls-cipher-suites":                            false,
	"tls-min-version":                              false,
	"tls-sni-cert-key":                             false,
	"http2-max-streams-per-connection":             false,
	"disable-http2-serving":                        true,
	"requestheader-client-ca-file":                 false,
	"requestheader-username-headers":               false,
	"requestheader-group-headers":                  false,
	"requestheader-extra-headers-prefix":           false,
	"requestheader-uid-headers":                    false,
	"service-cluster-ip-range":                     false,
	"tls-cert-file":                                false,
	"tls-private-key-file":                         false,
	"client-ca-file":                               false,
	"etcd-servers":                                 false,
	"secure-port":                                  false,
	"bind-address":                                 false,
	"cert-dir":                                     false,
	"storage-backend":                              false,
	"vmodule":                                      false,
	"contention-profiling":                         true,
	"debug-socket-path":                            false,
	"aggregator-reject-forwarding-redirect":        true,
	"peer-advertise-ip":                            false,
	"peer-advertise-port":                          false,
	"peer-ca-file":                                 false,
	"oidc-required-claim":                          false,
	"oidc-signing-algs":                            false,
	"oidc-username-prefix":                         false,
	"oidc-groups-prefix":                           false,
}

// ignoredFlag is a kube-apiserver flag kapi accepts and does not apply.
type ignoredFlag struct {
	isBool bool
	value  string
}

func (f *ignoredFlag) String() string { return f.value }
func (f *ignoredFlag) Set(v string) error {
	if f.isBool {
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("not a boolean: %q", v)
		}
	}
	f.value = v
	return nil
}
func (f *ignoredFlag) Type() string {
	if f.isBool {
		return "bool"
	}
	return "string"
}

// NewKubeAPIServerCommand returns kapi in kube-apiserver mode: it takes
// kube-apiserver's command line as envtest builds it. Differences from the
// kapi command:
//   - --cert-dir means what it means to kube-apiserver: the directory of
//     apiserver.crt and apiserver.key, used as the serving pair when both
//     exist (envtest writes them there). kapi's own PKI and data go to
//     --data-dir, by default <cert-dir>/kapi.
//   - kube-apiserver flags kapi does not implement are accepted and logged
//     (ignoredKubeAPIServerFlags); any other unknown flag is an error.
//   - without --etcd-servers, storage is the embedded etcd in --data-dir
//     (kube-apiserver requires --etcd-servers; kapi keeps its default).
func NewKubeAPIServerCommand() *cobra.Command {
	o := NewOptions()
	ignored := map[string]*ignoredFlag{}
	cmd := &cobra.Command{
		Use:           KubeAPIServerCommandName,
		Short:         "Run kapi in place of kube-apiserver (for envtest's KUBEBUILDER_ASSETS)",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := NewLogger(o.Verbosity)
			fs := cmd.Flags()
			for _, name := range slices.Sorted(maps.Keys(ignored)) {
				if fs.Changed(name) {
					logger.Info("kube-apiserver flag accepted but not applied by kapi", "flag", "--"+name, "value", ignored[name].value)
				}
			}
			if err := o.applyKubeAPIServerCertDir(fs.Changed("data-dir"), logger); err != nil {
				return err
			}
			completed, err := o.Complete()
			if err != nil {
				return err
			}
			completed.Logger = logger
			klog.SetSlogLogger(logger)
			return Run(server.SetupSignalContext(), completed)
		},
	}
	fs := cmd.Flags()
	o.AddFlags(fs)
	// kube-apiserver's --cert-dir default.
	o.SecureServing.CertDir = "/var/run/kubernetes"
	if f := fs.Lookup("cert-dir"); f != nil {
		f.DefValue = o.SecureServing.CertDir
		f.Usage = "The directory of apiserver.crt and apiserver.key (used when both exist); kapi's own PKI and data go to --data-dir, by default <cert-dir>/kapi."
	}
	o.DataDir = ""
	if f := fs.Lookup("data-dir"); f != nil {
		f.DefValue = "<cert-dir>/kapi"
	}
	for name, isBool := range ignoredKubeAPIServerFlags {
		if fs.Lookup(name) != nil {
			continue // kapi implements it
		}
		f := &ignoredFlag{isBool: isBool}
		ignored[name] = f
		pf := fs.VarPF(f, name, "", "kube-apiserver flag accepted and not applied by kapi (logged when set)")
		if isBool {
			pf.NoOptDefVal = "true"
		}
	}
	return cmd
}

// applyKubeAPIServerCertDir turns kube-apiserver's --cert-dir into kapi's
// options (see NewKubeAPIServerCommand).
func (o *Options) applyKubeAPIServerCertDir(dataDirSet bool, logger *slog.Logger) error {
	certDir := o.SecureServing.CertDir
	if certDir == "" {
		return errors.New("--cert-dir must not be empty")
	}
	if !dataDirSet || o.DataDir == "" {
		o.DataDir = filepath.Join(certDir, "kapi")
	}
	o.SecureServing.CertDir = filepath.Join(o.DataDir, "pki")
	if o.SecureServing.TLSCertFile != "" || o.SecureServing.TLSPrivateKeyFile != "" {
		return nil // kube-apiserver ignores --cert-dir then
	}
	crt, key := filepath.Join(certDir, pki.ServingCertFile), filepath.Join(certDir, pki.ServingKeyFile)
	_, crtErr := os.Stat(crt)
	_, keyErr := os.Stat(key)
	if crtErr == nil && keyErr == nil {
		o.SecureServing.TLSCertFile, o.SecureServing.TLSPrivateKeyFile = crt, key
		logger.Info("serving with the certificate in --cert-dir", "certFile", crt)
	}
	return nil
}

// etcdOptions are the etcd flags kapi's etcd mode applies to its embedded
// etcd server: those envtest passes (controller-runtime v0.25,
// pkg/internal/testing/controlplane/etcd.go) and the ones users commonly
// add, named and defaulted as etcd v3.7 names them (etcd --help).
type etcdOptions struct {
	name                     string
	dataDir, walDir          string
	listenClientURLs         []string
	advertiseClientURLs      []string
	listenPeerURLs           []string
	initialAdvertisePeerURLs []string
	listenMetricsURLs        []string
	initialCluster           string
	initialClusterState      string
	initialClusterToken      string
	unsafeNoFsync            bool
	quotaBackendBytes        int64
	maxRequestBytes          uint
	snapshotCount            uint64
	heartbeatInterval        uint
	electionTimeout          uint
	autoCompactionMode       string
	autoCompactionRetention  string
	logLevel                 string
	logger                   string
}

func (e *etcdOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&e.name, "name", "default", "Human-readable name for this member.")
	fs.StringVar(&e.dataDir, "data-dir", "${name}.etcd", "Path to the data directory.")
	fs.StringVar(&e.walDir, "wal-dir", "", "Path to the dedicated wal directory.")
	fs.StringSliceVar(&e.listenClientURLs, "listen-client-urls", []string{"http://localhost:2379"}, "List of URLs to listen on for client traffic.")
	fs.StringSliceVar(&e.advertiseClientURLs, "advertise-client-urls", []string{"http://localhost:2379"}, "List of this member's client URLs to advertise to the public.")
	fs.StringSliceVar(&e.listenPeerURLs, "listen-peer-urls", []string{"http://localhost:2380"}, "List of URLs to listen on for peer traffic.")
	fs.StringSliceVar(&e.initialAdvertisePeerURLs, "initial-advertise-peer-urls", []string{"http://localhost:2380"}, "List of this member's peer URLs to advertise to the rest of the cluster.")
	fs.StringSliceVar(&e.listenMetricsURLs, "listen-metrics-urls", nil, "List of URLs to listen on for the metrics and health endpoints.")
	fs.StringVar(&e.initialCluster, "initial-cluster", "", "Initial cluster configuration for bootstrapping (default <name>=<initial-advertise-peer-urls>).")
	fs.StringVar(&e.initialClusterState, "initial-cluster-state", "new", "Initial cluster state ('new' or 'existing').")
	fs.StringVar(&e.initialClusterToken, "initial-cluster-token", "etcd-cluster", "Initial cluster token for the etcd cluster during bootstrap.")
	fs.BoolVar(&e.unsafeNoFsync, "unsafe-no-fsync", false, "Disables fsync, unsafe, will cause data loss.")
	fs.Int64Var(&e.quotaBackendBytes, "quota-backend-bytes", 0, "Raise alarms when backend size exceeds the given quota. 0 means use the default quota.")
	fs.UintVar(&e.maxRequestBytes, "max-request-bytes", 1572864, "Maximum client request size in bytes the server will accept.")
	fs.Uint64Var(&e.snapshotCount, "snapshot-count", 10000, "Number of committed transactions to trigger a snapshot to disk.")
	fs.UintVar(&e.heartbeatInterval, "heartbeat-interval", 100, "Time (in milliseconds) of a heartbeat interval.")
	fs.UintVar(&e.electionTimeout, "election-timeout", 1000, "Time (in milliseconds) for an election to timeout.")
	fs.StringVar(&e.autoCompactionMode, "auto-compaction-mode", "periodic", "Interpret 'auto-compaction-retention' one of: periodic|revision.")
	fs.StringVar(&e.autoCompactionRetention, "auto-compaction-retention", "0", "Auto compaction retention for mvcc key value store. 0 means disable auto compaction.")
	fs.StringVar(&e.logLevel, "log-level", "info", "Configures log level. Only supports debug, info, warn, error, panic, or fatal.")
	fs.StringVar(&e.logger, "logger", "zap", "Currently only supports 'zap' for structured logging.")
}

func parseURLs(flag string, raw []string) ([]url.URL, error) {
	out := make([]url.URL, 0, len(raw))
	for _, s := range raw {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("--%s: invalid URL %q", flag, s)
		}
		out = append(out, *u)
	}
	return out, nil
}

// config builds the embedded etcd server's configuration.
func (e *etcdOptions) config() (*embed.Config, error) {
	ec := embed.NewConfig()
	ec.Name = e.name
	ec.Dir = e.dataDir
	if ec.Dir == "${name}.etcd" {
		ec.Dir = e.name + ".etcd"
	}
	ec.WalDir = e.walDir
	var err error
	if ec.ListenClientUrls, err = parseURLs("listen-client-urls", e.listenClientURLs); err != nil {
		return nil, err
	}
	if ec.AdvertiseClientUrls, err = parseURLs("advertise-client-urls", e.advertiseClientURLs); err != nil {
		return nil, err
	}
	if ec.ListenPeerUrls, err = parseURLs("listen-peer-urls", e.listenPeerURLs); err != nil {
		return nil, err
	}
	if ec.AdvertisePeerUrls, err = parseURLs("initial-advertise-peer-urls", e.initialAdvertisePeerURLs); err != nil {
		return nil, err
	}
	if ec.ListenMetricsUrls, err = parseURLs("listen-metrics-urls", e.listenMetricsURLs); err != nil {
		return nil, err
	}
	ec.InitialCluster = e.initialCluster
	if ec.InitialCluster == "" {
		ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	}
	ec.ClusterState = e.initialClusterState
	ec.InitialClusterToken = e.initialClusterToken
	ec.UnsafeNoFsync = e.unsafeNoFsync
	ec.QuotaBackendBytes = e.quotaBackendBytes
	ec.MaxRequestBytes = e.maxRequestBytes
	ec.SnapshotCount = e.snapshotCount
	ec.TickMs = e.heartbeatInterval
	ec.ElectionMs = e.electionTimeout
	ec.AutoCompactionMode = e.autoCompactionMode
	ec.AutoCompactionRetention = e.autoCompactionRetention
	ec.LogLevel = e.logLevel
	ec.Logger = e.logger
	if err := ec.Validate(); err != nil {
		return nil, fmt.Errorf("etcd configuration: %w", err)
	}
	return ec, nil
}

// NewEtcdCommand returns kapi in etcd mode: etcd's own server (the one kapi
// embeds), configured from etcd's flags, serving clients on
// --listen-client-urls until SIGTERM or SIGINT.
func NewEtcdCommand() *cobra.Command {
	e := &etcdOptions{}
	cmd := &cobra.Command{
		Use:           EtcdCommandName,
		Short:         "Run etcd's server (the one kapi embeds) in place of etcd (for envtest's KUBEBUILDER_ASSETS)",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ec, err := e.config()
			if err != nil {
				return err
			}
			ctx := server.SetupSignalContext()
			etcd, err := embed.StartEtcd(ec)
			if err != nil {
				return fmt.Errorf("start etcd: %w", err)
			}
			defer etcd.Close()
			select {
			case <-etcd.Server.ReadyNotify():
			case err := <-etcd.Err():
				return fmt.Errorf("etcd: %w", err)
			case <-ctx.Done():
				return nil
			}
			select {
			case err := <-etcd.Err():
				return fmt.Errorf("etcd: %w", err)
			case <-ctx.Done():
				return nil
			}
		},
	}
	e.addFlags(cmd.Flags())
	cmd.AddCommand(newEtcdSnapshotCommand(), newEtcdMemberCommand())
	return cmd
}

// newInstallEnvtestAssetsCommand returns `kapi install-envtest-assets DIR`.
func newInstallEnvtestAssetsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "install-envtest-assets DIR",
		Short: "Make DIR a KUBEBUILDER_ASSETS directory: kube-apiserver and etcd link to this kapi binary, kubectl to the one on PATH (if any)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find the kapi binary: %w", err)
			}
			kubectl, _ := exec.LookPath("kubectl")
			if err := InstallEnvtestAssets(args[0], self, kubectl); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "KUBEBUILDER_ASSETS=%s\n", args[0])
			return nil
		},
	}
}

// InstallEnvtestAssets makes dir a KUBEBUILDER_ASSETS directory: symbolic
// links kube-apiserver and etcd to kapiBinary, and kubectl to kubectl when
// it is not empty. Existing entries of those names are replaced.
func InstallEnvtestAssets(dir, kapiBinary, kubectl string) error {
	abs, err := filepath.Abs(kapiBinary)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	links := map[string]string{KubeAPIServerCommandName: abs, EtcdCommandName: abs}
	if kubectl != "" {
		if links["kubectl"], err = filepath.Abs(kubectl); err != nil {
			return err
		}
	}
	for name, target := range links {
		p := filepath.Join(dir, name)
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("replace %s: %w", p, err)
		}
		if err := os.Symlink(target, p); err != nil {
			return fmt.Errorf("link %s: %w", p, err)
		}
	}
	return nil
}
