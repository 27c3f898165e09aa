package service

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// objects is a rest.Getter over fixed objects of one namespace.
type objects map[string]runtime.Object

func (o objects) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if obj, ok := o[name]; ok {
		return obj.DeepCopyObject(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("objects"), name)
}

// sliceList lists fixed EndpointSlices by service name.
type sliceList map[string][]discoveryv1.EndpointSlice

func (s sliceList) ListEndpointSlices(_ context.Context, _, service string) ([]discoveryv1.EndpointSlice, error) {
	return s[service], nil
}

// Proxying to an endpoint: the API refuses loopback endpoint addresses, so
// the EndpointSlices and pods are given directly here, pointing at an
// httptest server on 127.0.0.1. Behaviour is upstream's ServiceREST
// ResourceLocation and RandomEndpoint (v1.37.2): only ready endpoints that
// are pods of the namespace with that IP are used; the slice port is
// matched by name; the path after /proxy/ and the query are forwarded.
func TestProxyToEndpoint(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.RequestURI())
	}))
	defer backend.Close()
	_, portStr, _ := net.SplitHostPort(backend.Listener.Addr().String())
	p, _ := strconv.Atoi(portStr)
	port := int32(p)

	const ns = "team"
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "other", Port: 81}}}}
	pod := func(name, ip string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Status: corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: ip}}}}
	}
	ref := func(name string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name}
	}
	r := &ProxyREST{
		services: objects{"web": svc},
		pods:     objects{"good": pod("good", "127.0.0.1"), "notready": pod("notready", "127.0.0.2"), "otherip": pod("otherip", "127.0.0.9")},
		slices: sliceList{"web": {{
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port)}, {Name: ptr.To("other"), Port: ptr.To(port)}},
			Endpoints: []discoveryv1.Endpoint{
				// Never chosen: not ready, not its pod's IP, no pod, another namespace.
				{Addresses: []string{"127.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}, TargetRef: ref("notready")},
				{Addresses: []string{"127.0.0.3"}, TargetRef: ref("otherip")},
				{Addresses: []string{"127.0.0.4"}},
				{Addresses: []string{"127.0.0.5"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "elsewhere", Name: "good"}},
				{Addresses: []string{"127.0.0.1"}, TargetRef: ref("good")},
			},
		}}},
		family:    corev1.IPv4Protocol,
		transport: &http.Transport{},
	}
	serve := func(id, sub string) *httptest.ResponseRecorder {
		target := "/api/v1/namespaces/" + ns + "/services/" + id + "/proxy" + sub
		req := httptest.NewRequest(http.MethodGet, target, nil)
		u, _ := url.Parse(target)
		parts := []string{"services", id, "proxy"}
		if rest := strings.Trim(u.Path[len("/api/v1/namespaces/"+ns+"/services/"+id+"/proxy"):], "/"); rest != "" {
			parts = append(parts, strings.Split(rest, "/")...)
		}
		ctx := request.WithNamespace(request.WithRequestInfo(req.Context(), &request.RequestInfo{Path: u.Path, Parts: parts}), ns)
		req = req.WithContext(ctx)
		rec := httptest.NewRecorder()
		h, err := r.Connect(ctx, id, req, func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway)
		})
		if err != nil {
			rec.Body.WriteString("connect: " + err.Error())
			rec.Code = http.StatusInternalServerError
			return rec
		}
		h.ServeHTTP(rec, req)
		return rec
	}
	// Each run picks a random start: repeat so every endpoint is a candidate.
	for range 20 {
		for _, tc := range []struct{ id, sub, want string }{
			{"web:http", "/some/path?x=1", "GET /some/path?x=1"},
			{"web:80", "/", "GET /"},
			{"http:web:other", "/a/b/", "GET /a/b/"},
		} {
			rec := serve(tc.id, tc.sub)
			if rec.Code != http.StatusOK || rec.Body.String() != tc.want {
				t.Fatalf("services/%s/proxy%s: %d %q, want %q", tc.id, tc.sub, rec.Code, rec.Body.String(), tc.want)
			}
		}
	}
	// No endpoint serves the unnamed port.
	ctx := request.WithNamespace(context.Background(), ns)
	if _, err := r.location(ctx, "web"); !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), `no endpoints available for service "web"`) {
		t.Errorf("unnamed port: %v", err)
	}
}
