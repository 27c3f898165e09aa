package app

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/manager"
	"github.com/kapi-dev/kapi/pkg/server/options"
)

// Options are everything the command line sets, grouped by concern.
type Options struct {
	DataDir         string
	AdminKubeconfig string
	Verbosity       int

	SecureServing  *options.SecureServingOptions
	Run            *options.ServerRunOptions
	Storage        *options.StorageOptions
	Audit          *options.AuditOptions
	Admission      *options.AdmissionOptions
	RequestHeader  *options.RequestHeaderOptions
	Aggregator     *options.AggregatorOptions
	Services       *options.ServiceOptions
	Authorization  *options.AuthorizationOptions
	Controllers    *options.ControllerOptions
	FlowControl    *options.FlowControlOptions
	Authentication *options.AuthenticationOptions
	CSRSigning     *options.CSRSigningOptions
	ResourceQuota  *options.ResourceQuotaOptions
	Cluster        *options.ClusterOptions
	WatchCache     *options.WatchCacheOptions
	Metrics        *options.MetricsOptions

	// Test seams (not flags).

	// Logger, if set, is used instead of one built from Verbosity.
	Logger *slog.Logger
	// OnLifecycleSignal is called with each lifecycle signal's name as it
	// fires, in order.
	OnLifecycleSignal func(name string)
	// APIServiceAvailabilityPeriod, if set, replaces how often the
	// aggregator re-probes an available non-local APIService (30s).
	APIServiceAvailabilityPeriod time.Duration
	// ConfigReloadInterval, if set, replaces how often the
	// --authorization-config and --authentication-config files are
	// checked for changes (a minute). A test seam: there is no flag.
	ConfigReloadInterval time.Duration
	// APFAdjustmentPeriod, if set, replaces how often API Priority and
	// Fairness adjusts the priority levels' seat limits (10s). A test
	// seam: there is no flag.
	APFAdjustmentPeriod time.Duration
	// UnsafeNoFsync, for a data dir thrown away after the run
	// (kapitest's), writes nothing under it with fsync: the embedded
	// etcd runs with UnsafeNoFsync (as envtest runs its etcd,
	// --unsafe-no-fsync) and the generated PKI is not synced. The data
	// survives a stop and restart of the server, not a crash of the
	// machine. A test seam: there is no flag.
	UnsafeNoFsync bool
	// DeferFileWrites lets NewConfig return before the files it generates
	// (PKI, service-account key, admin kubeconfig) are written: they are
	// written on a goroutine of their own while the chain is built and
	// started, and the caller must call Config.AwaitFiles before the files
	// can be read by anyone (kapitest: before Start returns). A cluster
	// member writes them at once regardless. A test seam: there is no flag.
	DeferFileWrites bool
	// OnPostStartHookError replaces the default (log and exit 255).
	OnPostStartHookError func(name string, err error)
	// BootstrapImage makes Run write the built-in bootstrap image (of the
	// default options: bootimage.Default) into the memory storage before
	// the chain is built, with the server's own identities: the
	// post-start hooks then find their objects stored. Only for options
	// that bootstrap as the defaults do; ignored on any other storage
	// backend. Not a flag: the command sets it when no flag but
	// per-server ones was given (usesBootstrapImage).
	BootstrapImage bool
	// Hostname, if set, replaces os.Hostname as the host name the API
	// server identity (its identity Lease's name and hostname label)
	// derives from (upstream's hostnameFunc, for tests of several servers
	// on one host).
	Hostname func() (string, error)
	// IdentityLeaseDurationSeconds, IdentityLeaseRenewInterval and
	// IdentityLeaseGCPeriod, if set, replace the identity Lease's
	// duration (3600), how often it is renewed (10s) and how often expired
	// identity Leases are collected (an hour): upstream's package
	// variables for its integration tests. Test seams: kube-apiserver
	// v1.37 has no flags for them.
	IdentityLeaseDurationSeconds int32
	IdentityLeaseRenewInterval   time.Duration
	IdentityLeaseGCPeriod        time.Duration
	// TokenCacheNow and TokenSuccessCacheTTL, if set, replace the clock of
	// the bearer-token cache and how long it keeps a token that
	// authenticated (10s; negative: no cache), as upstream's integration
	// tests set its TokenSuccessCacheTTL option. Test seams:
	// kube-apiserver v1.37 has no flag for either.
	TokenCacheNow        func() time.Time
	TokenSuccessCacheTTL time.Duration
}

// NewOptions returns the defaults of DESIGN.md §7.
func NewOptions() *Options {
	return &Options{
		DataDir:        "./kapi-data",
		SecureServing:  options.NewSecureServingOptions(),
		Run:            options.NewServerRunOptions(),
		Storage:        options.NewStorageOptions(),
		Audit:          options.NewAuditOptions(),
		Admission:      options.NewAdmissionOptions(),
		RequestHeader:  options.NewRequestHeaderOptions(),
		Aggregator:     options.NewAggregatorOptions(),
		Services:       options.NewServiceOptions(),
		Authorization:  options.NewAuthorizationOptions(),
		Controllers:    options.NewControllerOptions(),
		Authentication: options.NewAuthenticationOptions(),
		FlowControl:    options.NewFlowControlOptions(),
		CSRSigning:     options.NewCSRSigningOptions(),
		ResourceQuota:  options.NewResourceQuotaOptions(),
		Cluster:        options.NewClusterOptions(),
		WatchCache:     options.NewWatchCacheOptions(),
		Metrics:        options.NewMetricsOptions(),
	}
}

// AddFlags adds every flag to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "Directory for the embedded etcd data, the generated PKI and the admin kubeconfig.")
	fs.StringVar(&o.AdminKubeconfig, "admin-kubeconfig", o.AdminKubeconfig, "Where the cluster-admin kubeconfig is written at start (default <data-dir>/admin.kubeconfig).")
	fs.IntVarP(&o.Verbosity, "v", "v", o.Verbosity, "Log verbosity: 0 info, 1 and above debug.")
	o.SecureServing.AddFlags(fs)
	o.Run.AddFlags(fs)
	o.Storage.AddFlags(fs)
	o.Audit.AddFlags(fs)
	o.Admission.AddFlags(fs)
	o.RequestHeader.AddFlags(fs)
	o.Aggregator.AddFlags(fs)
	o.Services.AddFlags(fs)
	o.Authorization.AddFlags(fs)
	o.Controllers.AddFlags(fs, manager.Known())
	o.Authentication.AddFlags(fs)
	o.FlowControl.AddFlags(fs)
	o.CSRSigning.AddFlags(fs)
	o.ResourceQuota.AddFlags(fs)
	o.Cluster.AddFlags(fs)
	o.WatchCache.AddFlags(fs)
	o.Metrics.AddFlags(fs)
}

// CompletedOptions are Options with every derived default filled in; only
// they can be run.
type CompletedOptions struct {
	*Options
}

// Complete fills in derived defaults (cert dir, kubeconfig path) and
// validates everything, reporting all problems together.
func (o *Options) Complete() (CompletedOptions, error) {
	if o.DataDir == "" {
		return CompletedOptions{}, errors.New("--data-dir must not be empty")
	}
	if o.SecureServing.CertDir == "" {
		o.SecureServing.CertDir = filepath.Join(o.DataDir, "pki")
	}
	if o.AdminKubeconfig == "" {
		o.AdminKubeconfig = filepath.Join(o.DataDir, "admin.kubeconfig")
	}
	c := CompletedOptions{o}
	if err := c.Validate(); err != nil {
		return CompletedOptions{}, err
	}
	return c, nil
}

// Validate checks every option group.
func (o CompletedOptions) Validate() error {
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Run.Validate()...)
	errs = append(errs, o.Storage.Validate()...)
	errs = append(errs, o.Audit.Validate()...)
	errs = append(errs, o.Admission.Validate()...)
	errs = append(errs, o.RequestHeader.Validate()...)
	errs = append(errs, o.Aggregator.Validate()...)
	errs = append(errs, o.Services.Validate()...)
	errs = append(errs, o.Authorization.Validate()...)
	errs = append(errs, o.Controllers.Validate(manager.Known(), manager.Aliases(), manager.IsNotRun)...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.CSRSigning.Validate()...)
	errs = append(errs, o.ResourceQuota.Validate()...)
	errs = append(errs, o.Cluster.Validate(o.Storage.Embedded())...)
	errs = append(errs, o.WatchCache.Validate()...)
	errs = append(errs, o.Metrics.Validate()...)
	if o.Verbosity < 0 {
		errs = append(errs, fmt.Errorf("-v %d can not be negative", o.Verbosity))
	}
	return errors.Join(errs...)
}
