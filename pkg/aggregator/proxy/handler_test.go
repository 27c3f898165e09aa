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
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"
)

// noServices is a serviceresolver.Lister without any service.
type noServices struct{}

func (noServices) GetService(_ context.Context, _, name string) (*corev1.Service, error) {
	return nil, apierrors.NewNotFound(corev1.Resource("services"), name)
}

func (noServices) ListEndpointSlices(context.Context, string, string) ([]discoveryv1.EndpointSlice, error) {
	return nil, nil
}

func (noServices) GetEndpoints(_ context.Context, _, name string) (*corev1.Endpoints, error) {
	return nil, apierrors.NewNotFound(corev1.Resource("endpoints"), name)
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
	h := NewHandler(noServices{}, nil, nil)
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
