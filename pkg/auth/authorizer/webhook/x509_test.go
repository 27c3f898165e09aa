package webhook

import (
	"context"
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kapi-dev/kapi/internal/testx509"
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
	leaf := testx509.SelfSigned(t, "127.0.0.1", testx509.ECDSA, 0, testx509.CNOnly)
	f := &fakeService{}
	srv := httptest.NewUnstartedServer(f)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{*leaf}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	path := writeKubeconfig(t, &clientcmdapi.Cluster{Server: srv.URL + "/authorize", InsecureSkipTLSVerify: true})
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
	testx509.CheckWebhookCounters(t, reg, 1, 0)
	if ann := audit.FromContext(ctx).Annotations(); len(ann) != 1 || ann["missing-san.invalid-cert.kubernetes.io/127.0.0.1"] == "" {
		t.Errorf("annotations %v, want missing-san.invalid-cert.kubernetes.io/127.0.0.1", ann)
	}
}
