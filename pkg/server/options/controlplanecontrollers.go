package options

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// CSRSigningOptions configure the in-process CSR signing controller
// (kube-controller-manager's csrsigning options,
// cmd/kube-controller-manager/app/options/csrsigningcontroller.go). The
// signing CA is the cluster CA of --cert-dir (kubeadm points
// --cluster-signing-cert-file and -key-file at the same CA).
type CSRSigningOptions struct {
	// Duration is --cluster-signing-duration: the longest (and default)
	// lifetime of a signed certificate.
	Duration time.Duration
}

// NewCSRSigningOptions returns kube-controller-manager's default (one
// year).
func NewCSRSigningOptions() *CSRSigningOptions {
	return &CSRSigningOptions{Duration: 365 * 24 * time.Hour}
}

// AddFlags adds --cluster-signing-duration to fs.
func (o *CSRSigningOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Duration, "cluster-signing-duration", o.Duration, "The max length of duration signed certificates will be given. Individual CSRs may request shorter certs by setting spec.expirationSeconds.")
}

// Validate checks the duration is positive.
func (o *CSRSigningOptions) Validate() []error {
	if o.Duration <= 0 {
		return []error{fmt.Errorf("--cluster-signing-duration must be positive, got %v", o.Duration)}
	}
	return nil
}

// ResourceQuotaOptions configure the in-process resource quota controller
// (kube-controller-manager's resourcequota options,
// cmd/kube-controller-manager/app/options/resourcequotacontroller.go).
type ResourceQuotaOptions struct {
	// SyncPeriod is --resource-quota-sync-period.
	SyncPeriod time.Duration
}

// NewResourceQuotaOptions returns kube-controller-manager's default (5m).
func NewResourceQuotaOptions() *ResourceQuotaOptions {
	return &ResourceQuotaOptions{SyncPeriod: 5 * time.Minute}
}

// AddFlags adds --resource-quota-sync-period to fs.
func (o *ResourceQuotaOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.SyncPeriod, "resource-quota-sync-period", o.SyncPeriod, "The period for syncing quota usage status in the system")
}

// Validate checks the period is positive.
func (o *ResourceQuotaOptions) Validate() []error {
	if o.SyncPeriod <= 0 {
		return []error{fmt.Errorf("--resource-quota-sync-period must be positive, got %v", o.SyncPeriod)}
	}
	return nil
}
