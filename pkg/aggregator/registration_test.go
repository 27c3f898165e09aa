package aggregator

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The routes of the APIServices stored at start are in when
// APIServiceRegistrationControllerInitiated closes.
func TestRegistrationSignal(t *testing.T) {
	p := newPKI(t)
	ts := startServer(t, options{pki: p, noStart: true})
	ctx := systemContext(t.Context())
	for _, v := range []string{"v1", "v2"} {
		if _, err := ts.agg.Store().Create(ctx, remoteAPIService(group, v, "wardle", "api", p.servingCA.pem), nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-ts.s.MuxAndDiscoveryCompleteSignals()[RegistrationSignal]:
		t.Fatal("signal closed before start")
	default:
	}
	ts.run(t)
	ts.agg.routesMu.Lock()
	got := len(ts.agg.routes)
	ts.agg.routesMu.Unlock()
	if got != 2 {
		t.Fatalf("got %d routes when the signal closed, want 2", got)
	}
	// Not available yet (no service): 503, not a fall-through 404.
	get503(t, ts.httpClient(false), ts.srv.URL+"/apis/"+group+"/v2/things", "service unavailable\n")
	resp, err := ts.httpClient(false).Get(ts.srv.URL + "/apis/" + group + "/v3/things")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unregistered version: got %d, want 404", resp.StatusCode)
	}
}
