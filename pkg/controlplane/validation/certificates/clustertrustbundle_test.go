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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// caCertPEM returns a self-signed certificate; isCA sets the CA bit.
func caCertPEM(t *testing.T, isCA bool) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		IsCA: isCA, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// Messages and field paths: upstream's pkg/apis/certificates/validation
// (ValidateClusterTrustBundle, validateTrustBundle) and
// pkg/apis/core/validation ValidateClusterTrustBundleName (kubernetes,
// newest stored commit).
func TestValidateClusterTrustBundle(t *testing.T) {
	ca, ca2, leaf := caCertPEM(t, true), caCertPEM(t, true), caCertPEM(t, false)
	bundle := func(name, signer, data string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: data}}
	}
	for name, tc := range map[string]struct {
		b    *certificatesv1.ClusterTrustBundle
		want string
	}{
		"no signer":         {bundle("roots", "", ca), ""},
		"with signer":       {bundle("example.com:signer:roots", "example.com/signer", ca+ca2), ""},
		"colon w/o signer":  {bundle("a:b", "", ca), `metadata.name: Invalid value: "a:b": ClusterTrustBundle without signer name must not have ":" in its name`},
		"wrong prefix":      {bundle("roots", "example.com/signer", ca), `metadata.name: Invalid value: "roots": ClusterTrustBundle for signerName example.com/signer must be named with prefix example.com:signer:`},
		"bad rest of name":  {bundle("example.com:signer:A_B", "example.com/signer", ca), `metadata.name: Invalid value: "example.com:signer:A_B": a lowercase RFC 1123 subdomain`},
		"bad signer":        {bundle("x:y", "x/y", ca), "spec.signerName: Invalid value: \"x\": should be a domain with at least two segments separated by dots"},
		"empty bundle":      {bundle("roots", "", ""), `spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided`},
		"not PEM":           {bundle("roots", "", "hello"), `spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided`},
		"not CA":            {bundle("roots", "", leaf), `spec.trustBundle: Invalid value: "<value omitted>": entry 0 does not have the CA bit set`},
		"bad block type":    {bundle("roots", "", ca+"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), "entry 1 has bad block type: PRIVATE KEY"},
		"not X.509":         {bundle("roots", "", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), "entry 0 does not parse as X.509"},
		"headers":           {bundle("roots", "", "-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n-----END CERTIFICATE-----\n"), "entry 0 has PEM block headers"},
		"duplicate anchors": {bundle("roots", "", ca+ca2+ca), "duplicate trust anchor (indices [0 2])"},
		"too long":          {bundle("roots", "", strings.Repeat("x", MaxTrustBundleSize+1)), "spec.trustBundle: Too long: may not be more than 1048576 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			got := render(ValidateClusterTrustBundle(tc.b, true))
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateClusterTrustBundleUpdate(t *testing.T) {
	ca := caCertPEM(t, true)
	old := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:s:roots"}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/s", TrustBundle: ca}}
	changed := old.DeepCopy()
	changed.Spec.SignerName = "example.com/t"
	if got := render(ValidateClusterTrustBundleUpdate(changed, old)); !strings.Contains(got, `spec.signerName: Invalid value: "example.com/t": field is immutable`) {
		t.Errorf("signer change: %q", got)
	}
	// An unchanged bundle is not parsed again (upstream tolerates stored
	// data that a newer parser refuses).
	stale := old.DeepCopy()
	stale.Spec.TrustBundle = "not pem"
	again := stale.DeepCopy()
	again.Labels = map[string]string{"a": "b"}
	if got := render(ValidateClusterTrustBundleUpdate(again, stale)); got != "" {
		t.Errorf("unchanged bundle: %q", got)
	}
	again.Spec.TrustBundle = "still not pem"
	if got := render(ValidateClusterTrustBundleUpdate(again, stale)); !strings.Contains(got, "at least one trust anchor must be provided") {
		t.Errorf("changed bundle: %q", got)
	}
}
