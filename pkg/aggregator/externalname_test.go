package aggregator

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestExternalNameService: an APIService whose Service is of type
// ExternalName (externalName localhost, no ports) reaches its backend at
// localhost:<the APIService's port>, verified as api.wardle.svc (the
// backend's certificate names nothing else). As upstream's availability
// controller, kapi checks ports and endpoints of ClusterIP services only,
// so it is Available once discovery answers; the proxy sends the request
// with the external name and port as Host, as kube-aggregator does (the
// Host of the resolved location).
func TestExternalNameService(t *testing.T) {
	p := newPKI(t)
	ts := startServer(t, options{pki: p})
	w := newWardle()
	t.Cleanup(w.releaseWatch)
	b := startBackend(t, p, "wardle", "api", w, "")
	_, portStr, _ := net.SplitHostPort(b.addr)
	port, _ := strconv.Atoi(portStr)
	ts.svcs.mu.Lock()
	ts.svcs.services["wardle/api"] = &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "wardle", Name: "api"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	ts.svcs.mu.Unlock()
	svc := remoteAPIService(group, version, "wardle", "api", p.servingCA.pem)
	svc.Spec.Service.Port = ptr.To(int32(port))
	c := ts.client(t)
	if _, err := c.ApiregistrationV1().APIServices().Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, c, version+"."+group, 10*time.Second, reason("Passed"))

	client := ts.httpClient(true)
	want := net.JoinHostPort("localhost", portStr)
	eventually(t, 10*time.Second, func() error {
		resp, err := client.Get(ts.srv.URL + "/apis/" + group + "/" + version)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errorf("proxy route not ready: got %d", resp.StatusCode)
		}
		return nil
	})
	seen := doJSON(t, client, mustRequest(t, "GET", ts.srv.URL+"/apis/"+group+"/"+version+"/namespaces/ns1/flunders"))
	if seen.Host != want || seen.ClientCN != "front-proxy-client" || seen.Header.Get("X-Remote-User") != "alice" {
		t.Errorf("got Host %q, client CN %q, X-Remote-User %q; want %s, front-proxy-client, alice", seen.Host, seen.ClientCN, seen.Header.Get("X-Remote-User"), want)
	}

	// The remote discovery and OpenAPI fetches resolve it alike.
	u, _, err := ts.agg.Target(context.Background(), svc)
	if err != nil {
		t.Fatal(err)
	}
	if u.String() != "https://"+want {
		t.Errorf("Target: got %s, want https://%s", u, want)
	}
}
