package options

import (
	"fmt"

	"github.com/spf13/pflag"

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
}

// NewAuditOptions returns the defaults: no auditing.
func NewAuditOptions() *AuditOptions { return &AuditOptions{LogFormat: audit.FormatJSON} }

// AddFlags adds the audit flags to fs.
func (o *AuditOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.LogPath, "audit-log-path", o.LogPath, "If set, all requests coming to the apiserver will be logged to this file. '-' means standard out. Without --audit-policy-file, kapi logs every request at Metadata level (kube-apiserver logs nothing).")
	fs.StringVar(&o.PolicyFile, "audit-policy-file", o.PolicyFile, "Path to the file that defines the audit policy configuration (an audit.k8s.io/v1 Policy).")
	fs.StringVar(&o.LogFormat, "audit-log-format", o.LogFormat, `Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format. Known formats are legacy,json.`)
	fs.IntVar(&o.LogMaxAge, "audit-log-maxage", o.LogMaxAge, "The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.")
	fs.IntVar(&o.LogMaxBackups, "audit-log-maxbackup", o.LogMaxBackups, "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.")
	fs.IntVar(&o.LogMaxSize, "audit-log-maxsize", o.LogMaxSize, "The maximum size in megabytes of the audit log file before it gets rotated.")
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
	if o.PolicyFile != "" {
		if _, err := audit.LoadPolicyFile(o.PolicyFile); err != nil {
			errs = append(errs, fmt.Errorf("--audit-policy-file: %w", err))
		}
	}
	return errs
}

// Policy is the policy evaluator: the rules of --audit-policy-file, or
// (kapi's choice, kept from before policy files) every request at Metadata
// level without RequestReceived.
func (o *AuditOptions) Policy() (audit.PolicyEvaluator, error) {
	if o.PolicyFile == "" {
		return audit.MetadataPolicy(), nil
	}
	p, err := audit.LoadPolicyFile(o.PolicyFile)
	if err != nil {
		return nil, fmt.Errorf("--audit-policy-file: %w", err)
	}
	return audit.NewPolicyEvaluator(p), nil
}
