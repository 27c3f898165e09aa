package serviceresolver

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// lister is a Lister over one service, its slices and endpoints.
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

// TestResolve: expected hosts and error texts are upstream's
// (k8s.io/apiserver pkg/util/proxy/proxy.go ResolveEndpoints and
// ResolveCluster, v1.37; pkg/util/webhook/serviceresolver.go for an empty
// reference), with EndpointSlices read as kube-aggregator v1.37 reads
// them.
func TestResolve(t *testing.T) {
	https := corev1.ServicePort{Name: "https", Port: 443}
	external := func(externalName string, ports ...corev1.ServicePort) *corev1.Service {
		s := service(corev1.ServiceTypeExternalName, ports...)
		s.Spec.ExternalName = externalName
		return s
	}
	tests := []struct {
		name    string
		l       lister
		port    int32    // 0: 443
		want    []string // any of these hosts
		wantErr string
	}{
		{name: "slice, port by name", l: lister{svc: service("", https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, "https", 8443, nil, "10.0.0.1")}}, want: []string{"10.0.0.1:8443"}},
		{name: "ipv6", l: lister{svc: service(corev1.ServiceTypeClusterIP, https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv6, "https", 8443, ptr.To(true), "fd00::1")}}, want: []string{"[fd00::1]:8443"}},
		{name: "random among ready", l: lister{svc: service(corev1.ServiceTypeNodePort, https), slices: []discoveryv1.EndpointSlice{
			slice(discoveryv1.AddressTypeIPv4, "https", 8443, ptr.To(true), "10.0.0.1", "10.0.0.2"),
			slice(discoveryv1.AddressTypeIPv4, "https", 8443, ptr.To(false), "10.0.0.9"),
		}}, want: []string{"10.0.0.1:8443", "10.0.0.2:8443"}},
		{name: "load balancer", l: lister{svc: service(corev1.ServiceTypeLoadBalancer, https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, "https", 8443, nil, "10.0.0.5")}}, want: []string{"10.0.0.5:8443"}},
		{name: "not ready only", l: lister{svc: service("", https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, "https", 8443, ptr.To(false), "10.0.0.1")}}, wantErr: `no endpoints available for service "api"`},
		{name: "other port name", l: lister{svc: service("", https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, "metrics", 9090, nil, "10.0.0.1")}}, wantErr: `no endpoints available for service "api"`},
		{name: "fqdn slices skipped", l: lister{svc: service("", https), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeFQDN, "https", 8443, nil, "x.example.com")}}, wantErr: `no endpoints available for service "api"`},
		{name: "endpoints fallback", l: lister{svc: service("", https), eps: &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{
			Addresses:         []corev1.EndpointAddress{{IP: "10.0.0.3"}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.0.0.4"}},
			Ports:             []corev1.EndpointPort{{Name: "https", Port: 6443}},
		}}}}, want: []string{"10.0.0.3:6443"}},
		{name: "no endpoints at all", l: lister{svc: service("", https)}, wantErr: `no endpoints available for service "api"`},
		{name: "no such port", l: lister{svc: service("", corev1.ServicePort{Name: "https", Port: 8443})}, wantErr: `no service port 443 found for service "api"`},
		{name: "no service", l: lister{}, wantErr: `get service ns/api: services "api" not found`},
		{name: "unsupported type", l: lister{svc: service("Weird", https)}, wantErr: `unsupported service type "Weird"`},

		// ExternalName: the external name and the reference's port, the
		// Service's ports not consulted (ResolveCluster).
		{name: "external name", l: lister{svc: external("api.example.com")}, want: []string{"api.example.com:443"}},
		{name: "external name, the reference's port", l: lister{svc: external("localhost")}, port: 34567, want: []string{"localhost:34567"}},
		{name: "external name, service ports ignored", l: lister{svc: external("localhost", corev1.ServicePort{Name: "https", Port: 8443, TargetPort: intstr.FromInt32(9443)})}, want: []string{"localhost:443"}},
		{name: "external name with a trailing dot, kept", l: lister{svc: external("api.example.com.")}, want: []string{"api.example.com.:443"}},
		{name: "external name, endpoints ignored", l: lister{svc: external("localhost"), slices: []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, "https", 8443, nil, "10.0.0.1")}}, want: []string{"localhost:443"}},
		{name: "external name empty", l: lister{svc: external("")}, wantErr: `service ns/api of type ExternalName has no externalName`},

		{name: "negative port", l: lister{svc: external("localhost")}, port: -1, wantErr: `service ns/api: invalid port -1`},
		{name: "port out of range", l: lister{svc: external("localhost")}, port: 65536, wantErr: `service ns/api: invalid port 65536`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := tt.port
			if port == 0 {
				port = 443
			}
			seen := map[string]bool{}
			for range 50 {
				u, err := Resolve(context.Background(), tt.l, "ns", "api", port)
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

// An empty reference is refused before any lookup, with upstream's text.
func TestResolveEmptyReference(t *testing.T) {
	l := lister{svc: service(corev1.ServiceTypeExternalName)}
	for _, ref := range []struct {
		namespace, name string
		port            int32
	}{{"", "api", 443}, {"ns", "", 443}, {"ns", "api", 0}} {
		u, err := Resolve(context.Background(), l, ref.namespace, ref.name, ref.port)
		if err == nil || err.Error() != "cannot resolve an empty service name or namespace or port" {
			t.Errorf("%+v: got %v %v, want cannot resolve an empty service name or namespace or port", ref, u, err)
		}
	}
}

func TestServerName(t *testing.T) {
	if got := ServerName("ns", "api"); got != "api.ns.svc" {
		t.Errorf("ServerName: got %q, want api.ns.svc", got)
	}
	if got := HostPort("ns", "api", 8443); got != "api.ns.svc:8443" {
		t.Errorf("HostPort: got %q, want api.ns.svc:8443", got)
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
