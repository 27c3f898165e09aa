package options

import (
	"errors"

	"github.com/spf13/pflag"
)

// AuditOptions configure the audit log.
type AuditOptions struct {
	LogPath    string
	PolicyFile string
}

// NewAuditOptions returns the defaults: no auditing.
func NewAuditOptions() *AuditOptions { return &AuditOptions{} }

// AddFlags adds the audit flags to fs.
func (o *AuditOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.LogPath, "audit-log-path", o.LogPath, "If set, all requests coming to the apiserver will be logged to this file, one audit.k8s.io/v1 Event per line at Metadata level. '-' means standard out.")
	fs.StringVar(&o.PolicyFile, "audit-policy-file", o.PolicyFile, "Path to the file that defines the audit policy configuration. Not supported yet: every request is logged at Metadata level.")
}

// Validate checks the flags.
func (o *AuditOptions) Validate() []error {
	if o.PolicyFile != "" {
		// Honest refusal rather than silently ignoring a policy.
		return []error{errors.New("--audit-policy-file is not supported yet: kapi logs every request at Metadata level")}
	}
	return nil
}
