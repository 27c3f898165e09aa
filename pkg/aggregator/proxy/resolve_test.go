package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"
)

// lister is a ServiceLister over one service, its slices and endpoints.
type lister struct {
	svc    *corev1.Service
	slices []discoveryv1.EndpointSlice
	eps    *corev1.Endpoints
}

func (l lister) GetService(_ context.Context, _, name string) (*corev1.Service, error) {
	if l.svc == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("services"), name)
	}
	return l.svc, nil
}

func (l lister) ListEndpointSlices(context.Context, string, string) ([]discoveryv1.EndpointSlice, error) {
	return l.slices, nil
}

func (l lister) GetEndpoints(_ context.Context, _, name string) (*corev1.Endpoints, error) {
	if l.eps == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("endpoints"), name)
	}
	return l.eps, nil
}

func service(typ corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api"}, Spec: corev1.ServiceSpec{Type: typ, Ports: ports, ExternalName: "api.example.com"}}
}

func slice(addrType discoveryv1.AddressType, portName string, port int32, ready *bool, addrs ...string) discoveryv1.EndpointSlice {
	s := discoveryv1.EndpointSlice{AddressType: addrType, Ports: []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port)}}}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ready}})
	}
	return s
}

func TestResolveEndpoint(t *testing.T) {
	https := corev1.ServicePort{Name: "https", Port: 443}
	tests := []struct {
		name    string
		l       lister
		want    []string // any of these hosts
		wantErr string
	}{
		{"slice, port by name", lister{svc: service("", https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, "https", 8443, nil, "10.0.0.1")}}, []string{"10.0.0.1:8443"}, ""},
		{"ipv6", lister{svc: service(corev1.ServiceTypeClusterIP, https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv6, "https", 8443, ptr.To(true), "fd00::1")}}, []string{"[fd00::1]:8443"}, ""},
		{"random among ready", lister{svc: service(corev1.ServiceTypeNodePort, https), slices: []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, "https", 8443, ptr.To(true), "10.0.0.1", "10.0.0.2"),
			slice(discoveryv1.AddressTypeIPv4, "https", 8443, ptr.To(false), "10.0.0.9"),
		}}, []string{"10.0.0.1:8443", "10.0.0.2:8443"}, ""},
		{"not ready only", lister{svc: service("", https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, "https", 8443, ptr.To(false), "10.0.0.1")}}, nil, `no endpoints available for service "api"`},
		{"other port name", lister{svc: service("", https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, "metrics", 9090, nil, "10.0.0.1")}}, nil, `no endpoints available for service "api"`},
		{"fqdn slices skipped", lister{svc: service("", https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeFQDN, "https", 8443, nil, "x.example.com")}}, nil, `no endpoints available for service "api"`},
		{"endpoints fallback", lister{svc: service("", https), eps: &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{
			Addresses:         []corev1.EndpointAddress{{IP: "10.0.0.3"}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.0.0.4"}},
			Ports:             []corev1.EndpointPort{{Name: "https", Port: 6443}},
		}}}}, []string{"10.0.0.3:6443"}, ""},
		{"no endpoints at all", lister{svc: service("", https)}, nil, `no endpoints available for service "api"`},
		{"no such port", lister{svc: service("", corev1.ServicePort{Name: "https", Port: 8443})}, nil, `no service port 443 found for service "api"`},
		{"no service", lister{}, nil, `get service ns/api: services "api" not found`},
		{"external name", lister{svc: service(corev1.ServiceTypeExternalName)}, []string{"api.example.com:443"}, ""},
		{"unsupported type", lister{svc: service("Weird", https)}, nil, `unsupported service type "Weird"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]bool{}
			for range 50 {
				u, err := ResolveEndpoint(context.Background(), tt.l, "ns", "api", 443)
				if tt.wantErr != "" {
					if err == nil || err.Error() != tt.wantErr {
						t.Fatalf("got %v %v, want error %q", u, err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if u.Scheme != "https" || u.Path != "" {
					t.Fatalf("got %s, want https://host:port", u)
				}
				seen[u.Host] = true
			}
			for h := range seen {
				if !contains(tt.want, h) {
					t.Errorf("got host %s, want one of %v", h, tt.want)
				}
			}
			if len(seen) != len(tt.want) {
				t.Errorf("got hosts %v over 50 tries, want all of %v", seen, tt.want)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestIsUpgradeRequest(t *testing.T) {
	tests := []struct {
		connection, upgrade string
		want                bool
	}{
		{"Upgrade", "websocket", true},
		{"keep-alive, upgrade", "SPDY/3.1", true},
		{"keep-alive", "websocket", false},
		{"Upgrade", "", false},
	}
	for _, tt := range tests {
		r, _ := http.NewRequest("GET", "https://x/", nil)
		r.Header.Set("Connection", tt.connection)
		if tt.upgrade != "" {
			r.Header.Set("Upgrade", tt.upgrade)
		}
		if got := IsUpgradeRequest(r); got != tt.want {
			t.Errorf("Connection %q Upgrade %q: got %v, want %v", tt.connection, tt.upgrade, got, tt.want)
		}
	}
}

func TestNewTransport(t *testing.T) {
	svc := &apiregistrationv1.APIService{Spec: apiregistrationv1.APIServiceSpec{
		Service:  &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "api"},
		CABundle: []byte("not pem"),
	}}
	if _, err := NewTransport(svc, nil, 0); err == nil || !strings.Contains(err.Error(), "unable to load root certificates") {
		t.Errorf("bad caBundle: got %v, want unable to load root certificates", err)
	}
	svc.Spec.CABundle = nil
	tr, err := NewTransport(svc, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.http.TLSClientConfig.ServerName; got != "api.ns.svc" {
		t.Errorf("got server name %q, want api.ns.svc", got)
	}
	if !tr.http.ForceAttemptHTTP2 || tr.upgrade.TLSNextProto == nil {
		t.Error("want HTTP/2 for requests and HTTP/1.1 only for upgrades")
	}
	svc.Spec.Service = nil
	if _, err := NewTransport(svc, nil, 0); err == nil {
		t.Error("local APIService: got a transport, want an error")
	}
}

// A handler never updated, or for an unavailable APIService, answers 503.
func TestHandlerUnavailable(t *testing.T) {
	h := NewHandler(lister{}, nil)
	for _, update := range []bool{false, true} {
		if update {
			h.Update(&apiregistrationv1.APIService{Spec: apiregistrationv1.APIServiceSpec{Service: &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "api", Port: ptr.To[int32](443)}}}, nil, nil)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptestRequest(t))
		if rec.Code != http.StatusServiceUnavailable || rec.Body.String() != "service unavailable\n" {
			t.Errorf("updated=%v: got %d %q, want 503 service unavailable", update, rec.Code, rec.Body.String())
		}
	}
}

func httptestRequest(t *testing.T) *http.Request {
	t.Helper()
	r, err := http.NewRequest("GET", "https://x/apis/g/v/things", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
