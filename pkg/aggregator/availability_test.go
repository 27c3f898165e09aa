package aggregator

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func TestAvailabilityTransitions(t *testing.T) {
	p := newPKI(t)
	ts := startServer(t, options{pki: p, period: 100 * time.Millisecond, discoveryTimeout: 2 * time.Second})
	c := ts.client(t)
	ctx := context.Background()
	name := version + "." + group
	if _, err := c.ApiregistrationV1().APIServices().Create(ctx, remoteAPIService(group, version, "wardle", "api", p.servingCA.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	svc := waitCondition(t, c, name, 10*time.Second, reason("ServiceNotFound"))
	first := svc.Status.Conditions[0]
	if first.Status != "False" || first.Message != `service/api in "wardle" is not present` {
		t.Errorf("got %+v", first)
	}

	// The service without the APIService's port.
	ts.svcs.mu.Lock()
	ts.svcs.services["wardle/api"] = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "wardle", Name: "api"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 8443}}}}
	ts.svcs.mu.Unlock()
	svc = waitCondition(t, c, name, 10*time.Second, reason("ServicePortError"))
	if got := svc.Status.Conditions[0]; got.Message != `service/api in "wardle" is not listening on port 443` {
		t.Errorf("got %+v", got)
	}

	// The port, no endpoints.
	ts.svcs.setService("wardle", "api")
	svc = waitCondition(t, c, name, 10*time.Second, reason("EndpointsNotFound"))
	got := svc.Status.Conditions[0]
	if got.Message != `cannot find endpointslices for service/api in "wardle"` {
		t.Errorf("got %+v", got)
	}
	// lastTransitionTime changes only when the status flips.
	if !got.LastTransitionTime.Equal(&first.LastTransitionTime) {
		t.Errorf("lastTransitionTime moved from %v to %v without a status change", first.LastTransitionTime, got.LastTransitionTime)
	}

	// A backend.
	w := newWardle()
	b := startBackend(t, p, "wardle", "api", w, "")
	ts.svcs.setEndpoint("wardle", "api", b.addr)
	svc = waitCondition(t, c, name, 10*time.Second, reason("Passed"))
	if got := svc.Status.Conditions[0]; got.Status != "True" || got.Message != "all checks passed" {
		t.Errorf("got %+v", got)
	}

	// It stops...
	addr := b.addr
	b.srv.Close()
	svc = waitCondition(t, c, name, 10*time.Second, reason("FailedDiscoveryCheck"))
	if got := svc.Status.Conditions[0]; got.Status != "False" || !strings.HasPrefix(got.Message, "failing or missing response from https://"+addr+"/apis/wardle.example.com/v1alpha1: ") {
		t.Errorf("got %+v", got)
	}
	// ... and comes back on the same address.
	startBackend(t, p, "wardle", "api", w, addr)
	waitCondition(t, c, name, 10*time.Second, reason("Passed"))
}

func TestAvailabilityDiscoveryFailures(t *testing.T) {
	p := newPKI(t)
	ts := startServer(t, options{pki: p, period: 100 * time.Millisecond, discoveryTimeout: 2 * time.Second})
	c := ts.client(t)
	ctx := context.Background()

	// A backend answering discovery with 403.
	forbidden := startBackend(t, p, "ns", "forbidden", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}), "")
	ts.svcs.setService("ns", "forbidden")
	ts.svcs.setEndpoint("ns", "forbidden", forbidden.addr)
	if _, err := c.ApiregistrationV1().APIServices().Create(ctx, remoteAPIService("forbidden.example.com", "v1", "ns", "forbidden", p.servingCA.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A backend whose certificate the caBundle does not vouch for.
	good := startBackend(t, p, "ns", "wrongca", newWardle(), "")
	ts.svcs.setService("ns", "wrongca")
	ts.svcs.setEndpoint("ns", "wrongca", good.addr)
	other := newPKI(t)
	if _, err := c.ApiregistrationV1().APIServices().Create(ctx, remoteAPIService(group, version, "ns", "wrongca", other.servingCA.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	svc := waitCondition(t, c, "v1.forbidden.example.com", 10*time.Second, reason("FailedDiscoveryCheck"))
	want := "failing or missing response from https://" + forbidden.addr + "/apis/forbidden.example.com/v1: bad status from https://" + forbidden.addr + "/apis/forbidden.example.com/v1: 403"
	if got := svc.Status.Conditions[0].Message; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	svc = waitCondition(t, c, version+"."+group, 10*time.Second, reason("FailedDiscoveryCheck"))
	if got := svc.Status.Conditions[0].Message; !strings.Contains(got, "x509") {
		t.Errorf("got %q, want an x509 error", got)
	}

	// The right caBundle fixes it (a spec change is probed at once).
	svc.Spec.CABundle = p.servingCA.pem
	if _, err := c.ApiregistrationV1().APIServices().Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, c, version+"."+group, 10*time.Second, reason("Passed"))

	// insecureSkipTLSVerify works without a caBundle.
	if _, err := c.ApiregistrationV1().APIServices().Create(ctx, func() *apiregistrationv1.APIService {
		s := remoteAPIService(group, "v1beta1", "ns", "wrongca", nil)
		s.Spec.InsecureSkipTLSVerify = true
		return s
	}(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, c, "v1beta1."+group, 10*time.Second, reason("Passed"))
}

func TestAvailabilityHangingBackend(t *testing.T) {
	p := newPKI(t)
	// A long discovery timeout: the good APIService must pass long
	// before the hanging one's probe could time out.
	ts := startServer(t, options{pki: p, period: 100 * time.Millisecond, discoveryTimeout: time.Minute})
	c := ts.client(t)
	ctx := context.Background()
	release := make(chan struct{})
	hang := startBackend(t, p, "ns", "hang", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), "")
	t.Cleanup(func() { close(release) })
	ts.svcs.setService("ns", "hang")
	ts.svcs.setEndpoint("ns", "hang", hang.addr)
	if _, err := c.ApiregistrationV1().APIServices().Create(ctx, remoteAPIService("hang.example.com", "v1", "ns", "hang", p.servingCA.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	good := startBackend(t, p, "ns", "good", newWardle(), "")
	ts.svcs.setService("ns", "good")
	ts.svcs.setEndpoint("ns", "good", good.addr)
	if _, err := c.ApiregistrationV1().APIServices().Create(ctx, remoteAPIService(group, version, "ns", "good", p.servingCA.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, c, version+"."+group, 10*time.Second, reason("Passed"))
	svc, err := c.ApiregistrationV1().APIServices().Get(ctx, "v1.hang.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Status.Conditions) != 0 {
		t.Errorf("hanging backend: got %+v, want no verdict yet", svc.Status.Conditions)
	}
}

func TestAvailabilityEndpointsFallback(t *testing.T) {
	p := newPKI(t)
	ts := startServer(t, options{pki: p, period: 100 * time.Millisecond, discoveryTimeout: 2 * time.Second})
	c := ts.client(t)
	b := startBackend(t, p, "wardle", "api", newWardle(), "")
	ts.svcs.setService("wardle", "api")
	host, port := splitAddr(t, b.addr)
	ts.svcs.mu.Lock()
	ts.svcs.endpoints["wardle/api"] = &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: "wardle", Name: "api"},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: host}},
			Ports:     []corev1.EndpointPort{{Name: "https", Port: port}},
		}},
	}
	ts.svcs.mu.Unlock()
	if _, err := c.ApiregistrationV1().APIServices().Create(context.Background(), remoteAPIService(group, version, "wardle", "api", p.servingCA.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, c, version+"."+group, 10*time.Second, reason("Passed"))
	resp, err := ts.httpClient(true).Get(ts.srv.URL + "/apis/" + group + "/" + version + "/things")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("proxy through Endpoints: got %d, want 200", resp.StatusCode)
	}

	// A slice with only not-ready endpoints wins over the Endpoints.
	ts.svcs.setEndpoint("wardle", "api", b.addr)
	ts.svcs.mu.Lock()
	f := false
	ts.svcs.slices["wardle/api"][0].Endpoints[0].Conditions.Ready = &f
	ts.svcs.mu.Unlock()
	svc := waitCondition(t, c, version+"."+group, 10*time.Second, reason("MissingEndpoints"))
	if got := svc.Status.Conditions[0].Message; got != `endpointslices for service/api in "wardle" have no addresses with port name "https"` {
		t.Errorf("got %q", got)
	}
}

// TestAvailabilityFollowsServiceChanges: with a period of an hour, an
// available APIService is probed again only because its service's
// endpoints changed, and the change is seen at once.
func TestAvailabilityFollowsServiceChanges(t *testing.T) {
	p := newPKI(t)
	changes := make(chan types.NamespacedName, 1)
	ts := startServer(t, options{pki: p, period: time.Hour, discoveryTimeout: 2 * time.Second, serviceChanges: changes})
	c := ts.client(t)
	ctx := context.Background()
	name := version + "." + group
	ts.svcs.setService("wardle", "api")
	b := startBackend(t, p, "wardle", "api", newWardle(), "")
	ts.svcs.setEndpoint("wardle", "api", b.addr)
	if _, err := c.ApiregistrationV1().APIServices().Create(ctx, remoteAPIService(group, version, "wardle", "api", p.servingCA.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, c, name, 10*time.Second, reason("Passed"))

	// The service goes; nothing but the change notification would make
	// the aggregator look again within the hour.
	ts.svcs.deleteService("wardle", "api")
	changes <- types.NamespacedName{Namespace: "wardle", Name: "api"}
	waitCondition(t, c, name, 10*time.Second, reason("ServiceNotFound"))

	// It comes back.
	ts.svcs.setService("wardle", "api")
	changes <- types.NamespacedName{Namespace: "wardle", Name: "api"}
	waitCondition(t, c, name, 10*time.Second, reason("Passed"))
}
