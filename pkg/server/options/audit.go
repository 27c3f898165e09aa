package options

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/audit"
)

// AuditOptions configure auditing: the policy and the log backend, with
// kube-apiserver's flag names and defaults
// (k8s.io/apiserver/pkg/server/options/audit.go).
type AuditOptions struct {
	LogPath    string
	PolicyFile string
	// LogFormat is --audit-log-format: json or legacy.
	LogFormat string
	// LogMaxAge, LogMaxBackups and LogMaxSize are --audit-log-maxage
	// (days), --audit-log-maxbackup and --audit-log-maxsize (megabytes).
	LogMaxAge     int
	LogMaxBackups int
	LogMaxSize    int
	// LogCompress is --audit-log-compress: gzip rotated files.
	LogCompress bool
	// LogVersion is --audit-log-version (only audit.k8s.io/v1 exists).
	LogVersion string
	// LogTruncate is --audit-log-truncate-*.
	LogTruncate AuditTruncateOptions
	// Webhook is the webhook backend (--audit-webhook-*).
	Webhook AuditWebhookOptions
}

// NewAuditOptions returns the defaults: no auditing.
func NewAuditOptions() *AuditOptions {
	return &AuditOptions{LogFormat: audit.FormatJSON, LogVersion: audit.GroupVersion, LogTruncate: NewAuditTruncateOptions(), Webhook: *NewAuditWebhookOptions()}
}

// AuditTruncateOptions are the --audit-<backend>-truncate-* flags
// (upstream's AuditTruncateOptions).
type AuditTruncateOptions struct {
	Enabled bool
	audit.TruncateConfig
}

// NewAuditTruncateOptions returns upstream's defaults (off; 100 KiB
// events, 10 MiB batches).
func NewAuditTruncateOptions() AuditTruncateOptions {
	return AuditTruncateOptions{TruncateConfig: audit.TruncateConfig{MaxEventSize: audit.DefaultTruncateMaxEventSize, MaxBatchSize: audit.DefaultTruncateMaxBatchSize}}
}

// AddFlags adds --audit-<plugin>-truncate-* (upstream's help).
func (o *AuditTruncateOptions) AddFlags(plugin string, fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "audit-"+plugin+"-truncate-enabled", o.Enabled, "Whether event and batch truncating is enabled.")
	fs.Int64Var(&o.MaxBatchSize, "audit-"+plugin+"-truncate-max-batch-size", o.MaxBatchSize, "Maximum size of the batch sent to the underlying backend. Actual serialized size can be several hundreds of bytes greater. If a batch exceeds this limit, it is split into several batches of smaller size.")
	fs.Int64Var(&o.MaxEventSize, "audit-"+plugin+"-truncate-max-event-size", o.MaxEventSize, "Maximum size of the audit event sent to the underlying backend. If the size of an event is greater than this number, first request and response are removed, and if this doesn't reduce the size enough, event is discarded.")
}

// Validate checks the sizes (upstream's messages; checked whether or not
// truncation is enabled, as upstream).
func (o *AuditTruncateOptions) Validate(plugin string) error {
	if o.MaxEventSize <= 0 {
		return fmt.Errorf("invalid audit truncate %s max event size %v, must be a positive number", plugin, o.MaxEventSize)
	}
	if o.MaxBatchSize < o.MaxEventSize {
		return fmt.Errorf("invalid audit truncate %s max batch size %v, must be greater than max event size (%v)", plugin, o.MaxBatchSize, o.MaxEventSize)
	}
	return nil
}

// Wrap returns b behind the truncating backend when enabled.
func (o *AuditTruncateOptions) Wrap(b audit.Backend, m *audit.Metrics, logger *slog.Logger) audit.Backend {
	if !o.Enabled {
		return b
	}
	return audit.Truncate(b, o.TruncateConfig, m, logger)
}

// validateVersion checks --audit-*-version as upstream: only
// audit.k8s.io/v1 is known.
func validateVersion(v string) error {
	gv, err := schema.ParseGroupVersion(v)
	if err != nil {
		return err
	}
	if gv.String() != audit.GroupVersion {
		return fmt.Errorf("invalid group version, allowed versions are %q", []string{audit.GroupVersion})
	}
	return nil
}

// AddFlags adds the audit flags to fs.
func (o *AuditOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.LogPath, "audit-log-path", o.LogPath, "If set, all requests coming to the apiserver will be logged to this file.  '-' means standard out.")
	fs.StringVar(&o.PolicyFile, "audit-policy-file", o.PolicyFile, "Path to the file that defines the audit policy configuration (an audit.k8s.io/v1 Policy).")
	fs.StringVar(&o.LogFormat, "audit-log-format", o.LogFormat, `Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format. Known formats are legacy,json.`)
	fs.IntVar(&o.LogMaxAge, "audit-log-maxage", o.LogMaxAge, "The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.")
	fs.IntVar(&o.LogMaxBackups, "audit-log-maxbackup", o.LogMaxBackups, "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.")
	fs.IntVar(&o.LogMaxSize, "audit-log-maxsize", o.LogMaxSize, "The maximum size in megabytes of the audit log file before it gets rotated.")
	fs.BoolVar(&o.LogCompress, "audit-log-compress", o.LogCompress, "If set, the rotated log files will be compressed using gzip.")
	fs.StringVar(&o.LogVersion, "audit-log-version", o.LogVersion, "API group and version used for serializing audit events written to log.")
	o.LogTruncate.AddFlags("log", fs)
	o.Webhook.AddFlags(fs)
}

// Validate checks the flags (upstream's messages) and that the policy file
// loads.
func (o *AuditOptions) Validate() []error {
	var errs []error
	if o.LogFormat != audit.FormatJSON && o.LogFormat != audit.FormatLegacy {
		errs = append(errs, fmt.Errorf("invalid audit log format %s, allowed formats are %q", o.LogFormat, audit.FormatLegacy+","+audit.FormatJSON))
	}
	if o.LogMaxAge < 0 {
		errs = append(errs, fmt.Errorf("--audit-log-maxage %v can't be a negative number", o.LogMaxAge))
	}
	if o.LogMaxBackups < 0 {
		errs = append(errs, fmt.Errorf("--audit-log-maxbackup %v can't be a negative number", o.LogMaxBackups))
	}
	if o.LogMaxSize < 0 {
		errs = append(errs, fmt.Errorf("--audit-log-maxsize %v can't be a negative number", o.LogMaxSize))
	}
	if o.LogPath != "" {
		if err := o.LogTruncate.Validate("log"); err != nil {
			errs = append(errs, err)
		}
		if err := validateVersion(o.LogVersion); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, o.Webhook.Validate()...)
	if o.PolicyFile != "" {
		if _, err := audit.LoadPolicyFile(o.PolicyFile); err != nil {
			errs = append(errs, fmt.Errorf("--audit-policy-file: %w", err))
		}
	}
	return errs
}

// Policy is the policy evaluator of --audit-policy-file; nil without
// one: as upstream, nothing is audited then (no event reaches any
// backend, see [AuditOptions.Enabled]).
func (o *AuditOptions) Policy() (audit.PolicyEvaluator, error) {
	if o.PolicyFile == "" {
		return nil, nil
	}
	p, err := audit.LoadPolicyFile(o.PolicyFile)
	if err != nil {
		return nil, fmt.Errorf("--audit-policy-file: %w", err)
	}
	return audit.NewPolicyEvaluator(p), nil
}

// Enabled reports whether backends are built: upstream builds none
// without a policy file ("No audit policy file provided, no events will
// be recorded"), so --audit-log-path alone does not even create the file.
func (o *AuditOptions) Enabled() bool { return o.PolicyFile != "" }

// AuditWebhookOptions configure the audit webhook backend, with
// kube-apiserver's flags and defaults.
type AuditWebhookOptions struct {
	audit.WebhookConfig
	// Version is --audit-webhook-version (only audit.k8s.io/v1 exists).
	Version string
	// Truncate is --audit-webhook-truncate-*.
	Truncate AuditTruncateOptions
}

// NewAuditWebhookOptions returns upstream's defaults (no webhook).
func NewAuditWebhookOptions() *AuditWebhookOptions {
	return &AuditWebhookOptions{WebhookConfig: audit.DefaultWebhookConfig(), Version: audit.GroupVersion, Truncate: NewAuditTruncateOptions()}
}

// AddFlags adds the --audit-webhook-* flags to fs.
func (o *AuditWebhookOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.KubeconfigFile, "audit-webhook-config-file", o.KubeconfigFile, "Path to a kubeconfig formatted file that defines the audit webhook configuration.")
	fs.StringVar(&o.Mode, "audit-webhook-mode", o.Mode, "Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking,blocking-strict.")
	fs.DurationVar(&o.InitialBackoff, "audit-webhook-initial-backoff", o.InitialBackoff, "The amount of time to wait before retrying the first failed request.")
	fs.IntVar(&o.BufferSize, "audit-webhook-batch-buffer-size", o.BufferSize, "The size of the buffer to store events before batching and writing. Only used in batch mode.")
	fs.IntVar(&o.MaxBatchSize, "audit-webhook-batch-max-size", o.MaxBatchSize, "The maximum size of a batch. Only used in batch mode.")
	fs.DurationVar(&o.MaxBatchWait, "audit-webhook-batch-max-wait", o.MaxBatchWait, "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.")
	fs.BoolVar(&o.ThrottleEnable, "audit-webhook-batch-throttle-enable", o.ThrottleEnable, "Whether batching throttling is enabled. Only used in batch mode.")
	fs.Float32Var(&o.ThrottleQPS, "audit-webhook-batch-throttle-qps", o.ThrottleQPS, "Maximum average number of batches per second. Only used in batch mode.")
	fs.IntVar(&o.ThrottleBurst, "audit-webhook-batch-throttle-burst", o.ThrottleBurst, "Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.")
	fs.StringVar(&o.Version, "audit-webhook-version", o.Version, "API group and version used for serializing audit events written to webhook.")
	o.Truncate.AddFlags("webhook", fs)
}

// Validate checks the flags (upstream's messages).
func (o *AuditWebhookOptions) Validate() []error {
	var errs []error
	if o.KubeconfigFile == "" {
		return nil
	}
	if err := o.Truncate.Validate("webhook"); err != nil {
		errs = append(errs, err)
	}
	if err := validateVersion(o.Version); err != nil {
		errs = append(errs, err)
	}
	switch o.Mode {
	case audit.ModeBatch, audit.ModeBlocking, audit.ModeBlockingStrict:
	default:
		errs = append(errs, fmt.Errorf("invalid audit webhook mode %s, allowed modes are %q", o.Mode, audit.ModeBatch+","+audit.ModeBlocking+","+audit.ModeBlockingStrict))
	}
	if o.Mode == audit.ModeBatch {
		if o.BufferSize <= 0 {
			errs = append(errs, fmt.Errorf("invalid audit batch webhook buffer size %v, must be a positive number", o.BufferSize))
		}
		if o.MaxBatchSize <= 0 {
			errs = append(errs, fmt.Errorf("invalid audit batch webhook max size %v, must be a positive number", o.MaxBatchSize))
		}
		if o.ThrottleEnable && o.ThrottleQPS <= 0 {
			errs = append(errs, fmt.Errorf("invalid audit batch webhook throttle QPS %v, must be a positive number", o.ThrottleQPS))
		}
		if o.ThrottleEnable && o.ThrottleBurst <= 0 {
			errs = append(errs, fmt.Errorf("invalid audit batch webhook throttle burst %v, must be a positive number", o.ThrottleBurst))
		}
	}
	return errs
}
