package kapitest

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// prepare points every Service webhook at the local server (the service
// path kept, as envtest's updateClientConfig), sets the CA bundle, and
// writes a serving pair that verifies against that CA for the host.
func TestWebhookPrepare(t *testing.T) {
	path := "mutate"
	url := "https://example.com/keep"
	o := &WebhookInstallOptions{
		Paths: []string{"testdata/webhooks", "testdata/no-such-dir"}, IgnoreErrorIfPathMissing: true,
		MutatingWebhooks: []*admissionv1.MutatingWebhookConfiguration{{
			ObjectMeta: metav1.ObjectMeta{Name: "m"},
			Webhooks: []admissionv1.MutatingWebhook{
				{Name: "svc.kapi.dev", ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Name: "s", Namespace: "n", Path: &path}}},
				{Name: "url.kapi.dev", ClientConfig: admissionv1.WebhookClientConfig{URL: &url}},
			},
		}},
	}
	certDir := filepath.Join(t.TempDir(), "certs")
	if err := o.prepare(certDir); err != nil {
		t.Fatal(err)
	}
	if o.LocalServingHost != "127.0.0.1" || o.LocalServingPort == 0 || o.LocalServingCertDir != certDir {
		t.Errorf("local serving %s:%d in %s, want 127.0.0.1, a port, %s", o.LocalServingHost, o.LocalServingPort, o.LocalServingCertDir, certDir)
	}
	base := "https://127.0.0.1:" + strconv.Itoa(o.LocalServingPort) + "/"
	if len(o.ValidatingWebhooks) != 1 {
		t.Fatalf("read %d validating configurations from testdata/webhooks, want 1", len(o.ValidatingWebhooks))
	}
	for _, c := range []struct {
		cc   admissionv1.WebhookClientConfig
		want string
	}{
		{o.MutatingWebhooks[0].Webhooks[0].ClientConfig, base + "mutate"},
		{o.MutatingWebhooks[0].Webhooks[1].ClientConfig, url},
		{o.ValidatingWebhooks[0].Webhooks[0].ClientConfig, base + "validate-v1-configmap"},
	} {
		if c.cc.Service != nil || c.cc.URL == nil || *c.cc.URL != c.want {
			t.Errorf("client config %+v, want URL %s and no service", c.cc, c.want)
		}
		if string(c.cc.CABundle) != string(o.LocalServingCAData) || len(o.LocalServingCAData) == 0 {
			t.Errorf("caBundle is not the local serving CA")
		}
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(o.LocalServingCAData)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("serving certificate for %s: %v", host, err)
		}
	}
	if _, err := os.Stat(filepath.Join(certDir, "tls.key")); err != nil {
		t.Error(err)
	}

	missing := &WebhookInstallOptions{Paths: []string{"testdata/no-such-dir"}}
	if err := missing.prepare(t.TempDir()); err == nil {
		t.Error("a missing path without IgnoreErrorIfPathMissing: no error")
	}
}
