package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func requestPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func certificatePEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func render(errs field.ErrorList) string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return strings.Join(out, "\n")
}

// TestValidateCreate: the errors users hit most, with the field paths and
// messages of upstream's pkg/apis/certificates/validation/validation.go
// and core validation's ValidateSignerName (kubernetes v1.37).
func TestValidateCreate(t *testing.T) {
	req := requestPEM(t)
	valid := func() *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: req, SignerName: "kubernetes.io/kube-apiserver-client", Usages: []certificatesv1.KeyUsage{"client auth"},
		}}
	}
	tests := []struct {
		name   string
		mutate func(*certificatesv1.CertificateSigningRequest)
		want   string
	}{
		{"valid", func(*certificatesv1.CertificateSigningRequest) {}, ""},
		{"no request", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = nil },
			`spec.request: Invalid value: null: PEM block type must be CERTIFICATE REQUEST`},
		{"certificate as request", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = certificatePEM(t) },
			`spec.request: Invalid value: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t`},
		{"no usages", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = nil },
			`spec.usages: Required value`},
		{"unknown usage", func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{"client auth", "flying"}
		},
			`spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth"`},
		{"duplicate usage", func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{"client auth", "client auth"}
		}, `spec.usages[1]: Duplicate value: "client auth"`},
		{"no signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" },
			`spec.signerName: Required value`},
		{"signer without path", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com" },
			`spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form 'example.com/signer-name'`},
		{"signer single-label domain", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example/signer" },
			`spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots`},
		{"signer bad path", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com/Signer" },
			`spec.signerName: Invalid value: "Signer": validating label "Signer": a lowercase RFC 1123 subdomain`},
		{"legacy signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = LegacyUnknownSignerName },
			`spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version`},
		{"short expiration", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr.To[int32](599) },
			`spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)`},
		{"approved and denied", func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Approved", Status: "True"}, {Type: "Denied", Status: "True"}}
		}, "status.conditions: Invalid value: \"{conditions[{\\\"type\\\": \\\"Approved\\\"}], conditions[{\\\"type\\\": \\\"Denied\\\"}]}\": must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`"},
		{"approved false", func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Approved", Status: "False"}}
		}, `status.conditions[0].status: Unsupported value: "False": supported values: "True"`},
		{"condition without status", func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Custom"}}
		}, `status.conditions[0].status: Required value`},
		{"duplicate condition", func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Failed", Status: "True"}, {Type: "Failed", Status: "True"}}
		}, `status.conditions[1].type: Duplicate value: "Failed"`},
		{"not a certificate", func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = req },
			`status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			csr := valid()
			tc.mutate(csr)
			got := render(ValidateCreate(csr))
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) || tc.want != "" && got == "" {
				t.Errorf("got\n%s\nwant (prefix)\n%s", got, tc.want)
			}
		})
	}
}

// TestUpdatePaths: which update path may change what (upstream's
// validateCertificateSigningRequestUpdate).
func TestUpdatePaths(t *testing.T) {
	req, cert := requestPEM(t), certificatePEM(t)
	old := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		Request: req, SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{"client auth"},
	}}
	approved := old.DeepCopy()
	approved.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Approved", Status: corev1.ConditionTrue, Reason: "r"}}
	issued := approved.DeepCopy()
	issued.Status.Certificate = cert

	if got := render(ValidateUpdate(approved, old)); got != `status.conditions: Forbidden: updates may not add a condition of type "Approved"` {
		t.Errorf("main resource approving: %s", got)
	}
	if got := render(ValidateStatusUpdate(approved, old)); got != `status.conditions: Forbidden: updates may not add a condition of type "Approved"` {
		t.Errorf("status approving: %s", got)
	}
	if got := render(ValidateApprovalUpdate(approved, old)); got != "" {
		t.Errorf("approval approving: %s", got)
	}
	if got := render(ValidateApprovalUpdate(old, approved)); got != `status.conditions: Forbidden: updates may not remove a condition of type "Approved"` {
		t.Errorf("approval removing: %s", got)
	}
	if got := render(ValidateApprovalUpdate(issued, approved)); got != "status.certificate: Forbidden: updates may not set certificate content" {
		t.Errorf("approval issuing: %s", got)
	}
	if got := render(ValidateStatusUpdate(issued, approved)); got != "" {
		t.Errorf("status issuing: %s", got)
	}
	reissued := issued.DeepCopy()
	reissued.Status.Certificate = certificatePEM(t)
	if got := render(ValidateStatusUpdate(reissued, issued)); got != "status.certificate: Forbidden: updates may not modify existing certificate content" {
		t.Errorf("status reissuing: %s", got)
	}
	// A stored legacy-unknown request stays updatable.
	legacy := old.DeepCopy()
	legacy.Spec.SignerName = LegacyUnknownSignerName
	if got := render(ValidateUpdate(legacy, legacy)); got != "" {
		t.Errorf("legacy signer update: %s", got)
	}
}
