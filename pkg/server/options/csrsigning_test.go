package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestCSRSigningFilesValidate: the --cluster-signing-*-file rules and
// messages of kube-controller-manager's
// cmd/kube-controller-manager/app/options/csrsigningcontroller.go
// (Validate, csrSigningFilesValid), including upstream's labels of the
// per-signer pairs.
func TestCSRSigningFilesValidate(t *testing.T) {
	tests := []struct {
		flags []string
		want  []string // one substring per error, in order
	}{
		{nil, nil},
		{[]string{"--cluster-signing-cert-file=c", "--cluster-signing-key-file=k"}, nil},
		{[]string{"--cluster-signing-kubelet-serving-cert-file=c", "--cluster-signing-kubelet-serving-key-file=k"}, nil},
		{[]string{"--cluster-signing-cert-file=c"}, []string{`"cluster-signing": cannot specify cert without key`}},
		{[]string{"--cluster-signing-key-file=k"}, []string{`"cluster-signing": cannot specify key without cert`}},
		{[]string{"--cluster-signing-kubelet-serving-cert-file=c"}, []string{`"cluster-signing-kubelet-serving": cannot specify cert without key`}},
		{[]string{"--cluster-signing-kubelet-client-key-file=k"}, []string{`"cluster-signing-kube-apiserver-client": cannot specify key without cert`}},
		{[]string{"--cluster-signing-kube-apiserver-client-cert-file=c"}, []string{`"cluster-signing-kube-apiserver": cannot specify cert without key`}},
		{[]string{"--cluster-signing-legacy-unknown-key-file=k"}, []string{`"cluster-signing-legacy-unknown": cannot specify key without cert`}},
		{[]string{"--cluster-signing-cert-file=c", "--cluster-signing-key-file=k", "--cluster-signing-legacy-unknown-cert-file=c", "--cluster-signing-legacy-unknown-key-file=k"},
			[]string{"cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time"}},
		{[]string{"--cluster-signing-duration=0s"}, []string{"--cluster-signing-duration must be positive"}},
	}
	for _, tt := range tests {
		o := NewCSRSigningOptions()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tt.flags); err != nil {
			t.Fatalf("%v: %v", tt.flags, err)
		}
		errs := o.Validate()
		if len(errs) != len(tt.want) {
			t.Errorf("%v: got %v, want %d errors %q", tt.flags, errs, len(tt.want), tt.want)
			continue
		}
		for i, err := range errs {
			if !strings.Contains(err.Error(), tt.want[i]) {
				t.Errorf("%v: error %d %q, want %q", tt.flags, i, err, tt.want[i])
			}
		}
	}
}

// TestCSRSigningSignerFiles: which CA files each signer uses (upstream's
// get*SignerFiles in cmd/kube-controller-manager/app/certificates.go).
func TestCSRSigningSignerFiles(t *testing.T) {
	o := NewCSRSigningOptions()
	if got := o.SignerFiles(); got != nil {
		t.Errorf("no flags: %v, want nil (the cluster CA)", got)
	}
	o.ClusterSigningCertFile, o.ClusterSigningKeyFile = "c", "k"
	got := o.SignerFiles()
	if len(got) != 4 || got["kubernetes.io/legacy-unknown"] != (SigningFiles{"c", "k"}) || got["kubernetes.io/kubelet-serving"] != (SigningFiles{"c", "k"}) {
		t.Errorf("single pair: %v, want it for all four signers", got)
	}
	o = NewCSRSigningOptions()
	*o.PerSigner["kubernetes.io/kube-apiserver-client"] = SigningFiles{"c2", "k2"}
	got = o.SignerFiles()
	if len(got) != 1 || got["kubernetes.io/kube-apiserver-client"] != (SigningFiles{"c2", "k2"}) {
		t.Errorf("per signer: %v, want only kube-apiserver-client", got)
	}
}
