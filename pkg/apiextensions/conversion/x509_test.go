package conversion

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kapi-dev/kapi/internal/testx509"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/webhook/x509metrics"
)

// TestWebhookX509Counters calls a conversion webhook behind a service
// reference whose certificate names hook.webhooks.svc only in its Common
// Name: the call fails as upstream's (Go refuses the legacy Common Name),
// apiserver_webhooks_x509_missing_san_total counts it, and the caller's
// audit context gets the annotation for the service's host name (the
// URL's, not the resolved address: the counting wrapper is outside the
// resolution, as upstream's is outside its dialer).
func TestWebhookX509Counters(t *testing.T) {
	ca := newTestCA(t)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "not reached", http.StatusInternalServerError)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{*ca.Leaf(t, "hook.webhooks.svc", 0, testx509.CNOnly)}}
	s.StartTLS()
	t.Cleanup(s.Close)

	reg := prometheus.NewRegistry()
	counters, err := x509metrics.NewWebhookCounters(reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	cc := apiextensionsv1.WebhookClientConfig{
		Service:  &apiextensionsv1.ServiceReference{Namespace: "webhooks", Name: "hook"},
		CABundle: ca.PEM,
	}
	c, err := New(webhookCRD(cc), Options{ServiceResolver: staticResolver{addr: s.Listener.Addr().String()}, X509: counters})
	if err != nil {
		t.Fatal(err)
	}
	ctx := audit.WithContext(context.Background())
	_, err = c.ConvertObject(ctx, cronTab(gvV1, "a"), gvV2)
	want := `conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post "https://hook.webhooks.svc:443/?timeout=30s": tls: failed to verify certificate: x509: certificate relies on legacy Common Name field, use SANs instead`
	if err == nil || err.Error() != want {
		t.Fatalf("got error\n%v\nwant\n%s", err, want)
	}
	testx509.CheckWebhookCounters(t, reg, 1, 0)
	ann := audit.FromContext(ctx).Annotations()
	const annotation = "missing-san.invalid-cert.kubernetes.io/hook.webhooks.svc"
	if len(ann) != 1 || !strings.HasPrefix(ann[annotation], "relies on a legacy Common Name field") {
		t.Errorf("annotations %v, want only %s", ann, annotation)
	}
}
