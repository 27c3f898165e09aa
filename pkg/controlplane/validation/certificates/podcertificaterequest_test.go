package certificates

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func stubRequest(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func validPCR(t *testing.T, key any) *certificatesv1.PodCertificateRequest {
	t.Helper()
	max := int32(86400)
	return &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "pcr", Namespace: "ns", ResourceVersion: "1"},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: "example.com/signer", PodName: "pod", PodUID: "pod-uid",
			ServiceAccountName: "default", ServiceAccountUID: "sa-uid", NodeName: "node-1", NodeUID: "node-uid",
			MaxExpirationSeconds: &max, StubPKCS10Request: stubRequest(t, key),
		},
	}
}

func errStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// TestValidatePodCertificateRequestCreate: field paths, types and
// messages of upstream's ValidatePodCertificateRequestCreate
// (kubernetes pkg/apis/certificates/validation/validation.go, the stored
// version with unverifiedUserAnnotations; range constants from
// pkg/apis/certificates/types.go). The spec.stubPKCS10Request rows are
// upstream's validateStubPKCS10Request's; kube-apiserver v1.37.2 gave the
// empty, garbage and bad-signature answers when POSTed the same
// (2026-11-27). The unverifiedUserAnnotations domain-prefix message is
// kapi's.
func TestValidatePodCertificateRequestCreate(t *testing.T) {
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	rsa2048, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	i32 := func(v int32) *int32 { return &v }
	tests := []struct {
		name   string
		key    any
		mutate func(*certificatesv1.PodCertificateRequest)
		want   []string
	}{
		{"valid ecdsa", ecKey, func(*certificatesv1.PodCertificateRequest) {}, nil},
		{"valid ed25519", edKey, func(*certificatesv1.PodCertificateRequest) {}, nil},
		{"valid 91 days for another signer", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = i32(7862400) }, nil},
		{"no namespace", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Namespace = "" }, []string{"metadata.namespace: Required value"}},
		{"bad name", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Name = "Bad_Name" }, []string{`metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`}},
		{"no signer", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.SignerName = "" }, []string{"spec.signerName: Required value"}},
		{"signer without path", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.SignerName = "example.com" },
			[]string{`spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form 'example.com/signer-name'`}},
		{"bad pod name", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.PodName = "Pod" }, []string{`spec.podName: Invalid value: "Pod": a lowercase RFC 1123 subdomain`}},
		{"no pod uid", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.PodUID = "" }, []string{`spec.podUID: Invalid value: "": must not be empty`}},
		{"long sa uid", ecKey, func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.ServiceAccountUID = types.UID("u" + strings.Repeat("x", 128))
		},
			[]string{"spec.serviceAccountUID: Too long: may not be more than 128 bytes"}},
		{"no service account", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.ServiceAccountName = "" }, []string{`spec.serviceAccountName: Invalid value: "": a lowercase RFC 1123 subdomain`}},
		{"no node uid", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.NodeUID = "" }, []string{`spec.nodeUID: Invalid value: "": must not be empty`}},
		{"no max expiration", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = nil }, []string{"spec.maxExpirationSeconds: Required value: must be set"}},
		{"max expiration too short", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = i32(3599) },
			[]string{"spec.maxExpirationSeconds: Invalid value: 3599: must be in the range [3600, 7862400]"}},
		{"kubernetes.io signer capped at 24h", ecKey, func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.SignerName = "kubernetes.io/kube-apiserver-client-pod"
			r.Spec.MaxExpirationSeconds = i32(86401)
		}, []string{"spec.maxExpirationSeconds: Invalid value: 86401: must be in the range [3600, 86400]"}},
		{"user annotations", ecKey, func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.UnverifiedUserAnnotations = map[string]string{"example.com/ok": "v", "plain": "v"}
		}, []string{`spec.unverifiedUserAnnotations[plain]: Invalid value: "plain": must be domain-prefixed`}},
		{"no stub request", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = nil }, []string{"spec: Invalid value: exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"}},
		{"garbage stub request", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = []byte("nope") },
			[]string{"spec.stubPKCS10Request: Invalid value: must be a valid PKCS#10 CSR"}},
		{"oversized stub request", ecKey, func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = make([]byte, 10*1024+1) },
			[]string{"spec.stubPKCS10Request: Too long: may not be more than 10240 bytes"}},
		{"rsa 2048", rsa2048, func(*certificatesv1.PodCertificateRequest) {}, []string{`spec.stubPKCS10Request: Invalid value: "2048-bit modulus": RSA keys must have modulus size 3072 or 4096`}},
		{"curve P-224", p224, func(*certificatesv1.PodCertificateRequest) {}, []string{`spec.stubPKCS10Request: Invalid value: "curve P-224": elliptic public keys must use curve P256, P384, or P521`}},
		{"bad signature", ecKey, func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.StubPKCS10Request[len(r.Spec.StubPKCS10Request)-2] ^= 0xff
		}, []string{"spec.stubPKCS10Request: Invalid value: invalid signature"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validPCR(t, tt.key)
			tt.mutate(r)
			got := errStrings(ValidatePodCertificateRequestCreate(r))
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("error %d: got %q, want prefix %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// issue signs a leaf for the request's key, valid from notBefore for
// lifetime.
func issue(t *testing.T, pub any, notBefore time.Time, lifetime time.Duration) string {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: notBefore.Add(-time.Hour), NotAfter: notBefore.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), NotBefore: notBefore, NotAfter: notBefore.Add(lifetime)}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, pub, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestValidatePodCertificateRequestStatusUpdate: upstream's
// ValidatePodCertificateRequestStatusUpdate (same file): the terminal
// conditions, their exclusivity and freezing, and the consistency of an
// issued chain with the request and the clock. Lifetimes are reported as
// upstream passes them, a time.Duration (printed in nanoseconds).
func TestValidatePodCertificateRequestStatusUpdate(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now().Truncate(time.Second)
	cond := func(typ string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Because", Message: "m", LastTransitionTime: metav1.NewTime(now)}
	}
	issued := func(r *certificatesv1.PodCertificateRequest, pub any, lifetime time.Duration) {
		r.Status.Conditions = []metav1.Condition{cond("Issued")}
		r.Status.CertificateChain = issue(t, pub, now, lifetime)
		r.Status.NotBefore = &metav1.Time{Time: now}
		r.Status.NotAfter = &metav1.Time{Time: now.Add(lifetime)}
		r.Status.BeginRefreshAt = &metav1.Time{Time: now.Add(lifetime / 2)}
	}
	tests := []struct {
		name   string
		old    func(*certificatesv1.PodCertificateRequest)
		mutate func(*certificatesv1.PodCertificateRequest)
		want   []string
	}{
		{"issue", nil, func(r *certificatesv1.PodCertificateRequest) { issued(r, &key.PublicKey, 2*time.Hour) }, nil},
		{"deny", nil, func(r *certificatesv1.PodCertificateRequest) {
			r.Status.Conditions = []metav1.Condition{cond("Denied")}
		}, nil},
		{"unknown condition type", nil, func(r *certificatesv1.PodCertificateRequest) { r.Status.Conditions = []metav1.Condition{cond("Ready")} },
			[]string{`status.conditions.[0].type: Unsupported value: "Ready": supported values: "Issued", "Denied", "Failed"`}},
		{"two terminal conditions", nil, func(r *certificatesv1.PodCertificateRequest) {
			r.Status.Conditions = []metav1.Condition{cond("Denied"), cond("Failed")}
		}, []string{`status.conditions.[1].type: Invalid value: "Failed": There may be at most one condition with type "Issued", "Denied", or "Failed"`}},
		{"terminal condition not true", nil, func(r *certificatesv1.PodCertificateRequest) {
			c := cond("Failed")
			c.Status = metav1.ConditionFalse
			r.Status.Conditions = []metav1.Condition{c}
		}, []string{`status.conditions.[0].status: Unsupported value: "False": supported values: "True"`}},
		{"denied with a chain", nil, func(r *certificatesv1.PodCertificateRequest) {
			r.Status.Conditions = []metav1.Condition{cond("Denied")}
			r.Status.CertificateChain = "x"
		}, []string{"status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest"}},
		{"frozen once denied", func(r *certificatesv1.PodCertificateRequest) {
			r.Status.Conditions = []metav1.Condition{cond("Denied")}
		},
			func(r *certificatesv1.PodCertificateRequest) { r.Status.Conditions[0].Message = "changed" },
			[]string{"status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed"}},
		{"chain without condition", nil, func(r *certificatesv1.PodCertificateRequest) { r.Status.CertificateChain = "x" },
			[]string{`status: Invalid value: status is immutable unless transitioning to "Issued", "Denied", or "Failed"`}},
		{"issued to another key", nil, func(r *certificatesv1.PodCertificateRequest) { issued(r, &other.PublicKey, 2*time.Hour) },
			[]string{"status.certificateChain: Invalid value: \"-----BEGIN CERTIFICATE-----"}},
		{"issued without chain", nil, func(r *certificatesv1.PodCertificateRequest) {
			issued(r, &key.PublicKey, 2*time.Hour)
			r.Status.CertificateChain = ""
		}, []string{`status.certificateChain: Invalid value: "": issued certificate chain must contain at least one certificate`}},
		{"lifetime under an hour", nil, func(r *certificatesv1.PodCertificateRequest) { issued(r, &key.PublicKey, 30*time.Minute) },
			[]string{`status.certificateChain: Invalid value: 1800000000000: leaf certificate lifetime must be >= 1 hour`}},
		{"lifetime over maxExpirationSeconds", nil, func(r *certificatesv1.PodCertificateRequest) { issued(r, &key.PublicKey, 25*time.Hour) },
			[]string{`status.certificateChain: Invalid value: 90000000000000: leaf certificate lifetime must be <= spec.maxExpirationSeconds (86400)`}},
		{"notAfter inconsistent", nil, func(r *certificatesv1.PodCertificateRequest) {
			issued(r, &key.PublicKey, 2*time.Hour)
			r.Status.NotAfter = &metav1.Time{Time: now.Add(3 * time.Hour)}
		}, []string{"status.notAfter: Invalid value: "}},
		{"beginRefreshAt too early", nil, func(r *certificatesv1.PodCertificateRequest) {
			issued(r, &key.PublicKey, 2*time.Hour)
			r.Status.BeginRefreshAt = &metav1.Time{Time: now.Add(5 * time.Minute)}
		}, []string{"status.beginRefreshAt: Invalid value: "}},
		{"missing timestamps", nil, func(r *certificatesv1.PodCertificateRequest) {
			issued(r, &key.PublicKey, 2*time.Hour)
			r.Status.NotBefore, r.Status.NotAfter, r.Status.BeginRefreshAt = nil, nil, nil
		}, []string{"status.notBefore: Required value: must be present and consistent with the issued certificate",
			"status.notAfter: Required value: must be present and consistent with the issued certificate",
			"status.beginRefreshAt: Required value: must be present and in the range [notbefore+10min, notafter-10min]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validPCR(t, key)
			if tt.old != nil {
				tt.old(old)
			}
			r := old.DeepCopy()
			tt.mutate(r)
			got := errStrings(ValidatePodCertificateRequestStatusUpdate(r, old, now))
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("error %d: got %q, want prefix %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestValidatePodCertificateRequestUpdate: the spec is immutable
// (upstream's ValidatePodCertificateRequestUpdate), metadata may change.
func TestValidatePodCertificateRequestUpdate(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	old := validPCR(t, key)
	r := old.DeepCopy()
	r.Labels = map[string]string{"a": "b"}
	if errs := ValidatePodCertificateRequestUpdate(r, old); len(errs) != 0 {
		t.Errorf("label change: %v", errs)
	}
	r.Spec.PodName = "other"
	errs := errStrings(ValidatePodCertificateRequestUpdate(r, old))
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "spec: Invalid value: ") || !strings.HasSuffix(errs[0], "field is immutable") {
		t.Errorf("spec change: %q, want spec: ... field is immutable", errs)
	}
}
