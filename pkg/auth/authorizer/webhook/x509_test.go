package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// TestWebhookX509Counters asks a webhook, reached with
// insecure-skip-tls-verify, whose certificate has no SAN extension: the
// call succeeds (nothing verifies the name) and
// apiserver_webhooks_x509_missing_san_total counts it, as upstream's
// GenericWebhook wrapper does; the request's audit context gets the
// annotation for the kubeconfig server's host.
func TestWebhookX509Counters(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeService{}
	srv := httptest.NewUnstartedServer(f)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["authz"] = &clientcmdapi.Cluster{Server: srv.URL + "/authorize", InsecureSkipTLSVerify: true}
	cfg.AuthInfos["kapi"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "authz", AuthInfo: "kapi"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	counters, err := x509metrics.NewWebhookCounters(reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{KubeconfigFile: path, WrapTransport: counters.Wrap})
	if err != nil {
		t.Fatal(err)
	}
	ctx := audit.WithContext(context.Background())
	d, _, err := a.Authorize(ctx, authorizer.Attributes{User: &user.Info{Name: "alice"}, Verb: "get", ResourceRequest: true, Resource: "pods", APIVersion: "v1"})
	if d != authorizer.DecisionAllow || err != nil {
		t.Fatalf("got %v, %v; want Allow", d, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
	}
	if got["apiserver_webhooks_x509_missing_san_total"] != 1 || got["apiserver_webhooks_x509_insecure_sha1_total"] != 0 {
		t.Errorf("counters %v, want missing SAN 1, SHA-1 0", got)
	}
	if ann := audit.FromContext(ctx).Annotations(); len(ann) != 1 || ann["missing-san.invalid-cert.kubernetes.io/127.0.0.1"] == "" {
		t.Errorf("annotations %v, want missing-san.invalid-cert.kubernetes.io/127.0.0.1", ann)
	}
}
