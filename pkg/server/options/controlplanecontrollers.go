package options

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// CSRSigningOptions configure the in-process CSR signing controller
// (kube-controller-manager's csrsigning options,
// cmd/kube-controller-manager/app/options/csrsigningcontroller.go). The
// signing CA is the cluster CA of --cert-dir unless
// --cluster-signing-{cert,key}-file or the per-signer
// --cluster-signing-<signer>-{cert,key}-file flags name others (kapi runs
// these controllers in-process, so it takes their flags).
type CSRSigningOptions struct {
	// Duration is --cluster-signing-duration: the longest (and default)
	// lifetime of a signed certificate.
	Duration time.Duration
	// ClusterSigningCertFile and ClusterSigningKeyFile are
	// --cluster-signing-cert-file and --cluster-signing-key-file: the CA
	// every kubernetes.io signer signs with instead of the cluster CA of
	// --cert-dir.
	ClusterSigningCertFile string
	ClusterSigningKeyFile  string
	// PerSigner are the --cluster-signing-<signer>-{cert,key}-file pairs
	// by signer name (see SignerFlags); when any is set, only the
	// signers given one sign, as kube-controller-manager.
	PerSigner map[string]*SigningFiles
}

// SigningFiles are a CA certificate file and its key file (PEM).
type SigningFiles struct {
	CertFile, KeyFile string
}

// SignerFlags are the per-signer flags' infixes by signer name, and the
// name upstream's Validate labels their errors with
// (kube-controller-manager's
// cmd/kube-controller-manager/app/options/csrsigningcontroller.go; its
// labels for the kubelet client and kube-apiserver client pairs are kept
// as upstream prints them).
var SignerFlags = []struct{ Signer, Infix, Label string }{
	{"kubernetes.io/kubelet-serving", "kubelet-serving", "cluster-signing-kubelet-serving"},
	{"kubernetes.io/kube-apiserver-client-kubelet", "kubelet-client", "cluster-signing-kube-apiserver-client"},
	{"kubernetes.io/kube-apiserver-client", "kube-apiserver-client", "cluster-signing-kube-apiserver"},
	{"kubernetes.io/legacy-unknown", "legacy-unknown", "cluster-signing-legacy-unknown"},
}

// NewCSRSigningOptions returns kube-controller-manager's default (one
// year).
func NewCSRSigningOptions() *CSRSigningOptions {
	o := &CSRSigningOptions{Duration: 365 * 24 * time.Hour, PerSigner: map[string]*SigningFiles{}}
	for _, f := range SignerFlags {
		o.PerSigner[f.Signer] = &SigningFiles{}
	}
	return o
}

// AddFlags adds --cluster-signing-duration to fs.
func (o *CSRSigningOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Duration, "cluster-signing-duration", o.Duration, "The max length of duration signed certificates will be given. Individual CSRs may request shorter certs by setting spec.expirationSeconds.")
	fs.StringVar(&o.ClusterSigningCertFile, "cluster-signing-cert-file", o.ClusterSigningCertFile, "Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates.  If specified, no more specific --cluster-signing-* flag may be specified.")
	fs.StringVar(&o.ClusterSigningKeyFile, "cluster-signing-key-file", o.ClusterSigningKeyFile, "Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates.  If specified, no more specific --cluster-signing-* flag may be specified.")
	for _, f := range SignerFlags {
		p := o.PerSigner[f.Signer]
		if p == nil {
			p = &SigningFiles{}
			if o.PerSigner == nil {
				o.PerSigner = map[string]*SigningFiles{}
			}
			o.PerSigner[f.Signer] = p
		}
		fs.StringVar(&p.CertFile, "cluster-signing-"+f.Infix+"-cert-file", p.CertFile, "Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the "+f.Signer+" signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
		fs.StringVar(&p.KeyFile, "cluster-signing-"+f.Infix+"-key-file", p.KeyFile, "Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the "+f.Signer+" signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
	}
}

// Validate checks the duration is positive and the signing files as
// kube-controller-manager's CSRSigningControllerOptions.Validate: each
// per-signer pair both or neither, and not with
// --cluster-signing-{cert,key}-file. kapi also refuses half of the
// --cluster-signing-{cert,key}-file pair (upstream then silently runs no
// signer at all; kapi would otherwise fall back to the cluster CA, which
// is not what the flag asked for).
func (o *CSRSigningOptions) Validate() []error {
	var errs []error
	if o.Duration <= 0 {
		errs = append(errs, fmt.Errorf("--cluster-signing-duration must be positive, got %v", o.Duration))
	}
	if err := signingFilesValid(SigningFiles{o.ClusterSigningCertFile, o.ClusterSigningKeyFile}); err != nil {
		errs = append(errs, fmt.Errorf("%q: %w", "cluster-signing", err))
	}
	anySpecific := false
	for _, f := range SignerFlags {
		p := o.PerSigner[f.Signer]
		if p == nil {
			continue
		}
		if err := signingFilesValid(*p); err != nil {
			errs = append(errs, fmt.Errorf("%q: %w", f.Label, err))
		}
		if p.CertFile != "" || p.KeyFile != "" {
			anySpecific = true
		}
	}
	if (o.ClusterSigningCertFile != "" || o.ClusterSigningKeyFile != "") && anySpecific {
		errs = append(errs, errors.New("cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time"))
	}
	return errs
}

// signingFilesValid: both files or neither (upstream's
// csrSigningFilesValid, same messages).
func signingFilesValid(f SigningFiles) error {
	switch {
	case f.CertFile == "" && f.KeyFile != "":
		return errors.New("cannot specify key without cert")
	case f.CertFile != "" && f.KeyFile == "":
		return errors.New("cannot specify cert without key")
	}
	return nil
}

// SignerFiles are the CA files each kubernetes.io signer signs with, by
// signer name, as kube-controller-manager picks them: with
// --cluster-signing-{cert,key}-file every signer uses that pair; with
// per-signer flags only the signers given a pair sign (the others do not
// run). nil means no file was given: the signers use the cluster CA.
func (o *CSRSigningOptions) SignerFiles() map[string]SigningFiles {
	out := map[string]SigningFiles{}
	for _, f := range SignerFlags {
		if p := o.PerSigner[f.Signer]; p != nil && p.CertFile != "" {
			out[f.Signer] = *p
		}
	}
	if len(out) > 0 {
		return out
	}
	if o.ClusterSigningCertFile == "" {
		return nil
	}
	for _, f := range SignerFlags {
		out[f.Signer] = SigningFiles{o.ClusterSigningCertFile, o.ClusterSigningKeyFile}
	}
	return out
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
