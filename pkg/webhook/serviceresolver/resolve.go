package serviceresolver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Lister is what services and their endpoints are read from.
// Implementations must be safe for concurrent use; a missing object is an
// error for which apierrors.IsNotFound is true.
type Lister interface {
	// GetService returns the service namespace/name.
	GetService(ctx context.Context, namespace, name string) (*corev1.Service, error)
	// ListEndpointSlices returns the EndpointSlices of the service
	// namespace/service (label kubernetes.io/service-name); none is not
	// an error.
	ListEndpointSlices(ctx context.Context, namespace, service string) ([]discoveryv1.EndpointSlice, error)
	// GetEndpoints returns the Endpoints object namespace/name.
	GetEndpoints(ctx context.Context, namespace, name string) (*corev1.Endpoints, error)
}

// errEmptyReference is upstream's error for a reference without a name,
// namespace or port (k8s.io/apiserver pkg/util/webhook
// defaultServiceResolver).
var errEmptyReference = errors.New("cannot resolve an empty service name or namespace or port")

// ServerName is the name a Service's backend is verified as:
// <name>.<namespace>.svc.
func ServerName(namespace, name string) string { return name + "." + namespace + ".svc" }

// HostPort is the host of a webhook URL for a service reference:
// <name>.<namespace>.svc:<port>.
func HostPort(namespace, name string, port int32) string {
	return net.JoinHostPort(ServerName(namespace, name), strconv.Itoa(int(port)))
}

// Resolve returns the https URL (no path) that reaches the service
// namespace/name on its port port, as the package documentation
// describes: an ExternalName service's external name and port, else one
// ready endpoint chosen at random.
func Resolve(ctx context.Context, services Lister, namespace, name string, port int32) (*url.URL, error) {
	if namespace == "" || name == "" || port == 0 {
		return nil, errEmptyReference
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("service %s/%s: invalid port %d", namespace, name, port)
	}
	svc, err := services.GetService(ctx, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("get service %s/%s: %w", namespace, name, err)
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		if svc.Spec.ExternalName == "" {
			// Validation forbids it; a Service built in-process may not
			// have been validated.
			return nil, fmt.Errorf("service %s/%s of type ExternalName has no externalName", namespace, name)
		}
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}, nil
	case "", corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		return nil, fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
	svcPort, err := FindServicePort(svc, port)
	if err != nil {
		return nil, err
	}
	addrs, err := ReadyAddresses(ctx, services, namespace, name, svcPort.Name)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	return &url.URL{Scheme: "https", Host: addrs[rand.IntN(len(addrs))]}, nil
}

// FindServicePort returns the port of svc whose port number is port.
func FindServicePort(svc *corev1.Service, port int32) (*corev1.ServicePort, error) {
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			return &svc.Spec.Ports[i], nil
		}
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, svc.Name))
}

// ReadyAddresses returns "host:port" of every ready endpoint of the
// service namespace/name on its port named portName: from its
// EndpointSlices (IPv4 and IPv6 ones) if it has any, else from its
// Endpoints (a missing Endpoints object means none).
func ReadyAddresses(ctx context.Context, services Lister, namespace, name, portName string) ([]string, error) {
	slices, err := services.ListEndpointSlices(ctx, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("list endpointslices of %s/%s: %w", namespace, name, err)
	}
	if len(slices) > 0 {
		return sliceAddresses(slices, portName), nil
	}
	eps, err := services.GetEndpoints(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get endpoints %s/%s: %w", namespace, name, err)
	}
	return endpointsAddresses(eps, portName), nil
}

func sliceAddresses(slices []discoveryv1.EndpointSlice, portName string) []string {
	var out []string
	for i := range slices {
		s := &slices[i]
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		port := int32(0)
		for _, p := range s.Ports {
			if p.Port != nil && nameOf(p.Name) == portName {
				port = *p.Port
				break
			}
		}
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
				continue
			}
			out = append(out, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port))))
		}
	}
	return out
}

func endpointsAddresses(eps *corev1.Endpoints, portName string) []string {
	var out []string
	for _, ss := range eps.Subsets {
		for _, p := range ss.Ports {
			if p.Name != portName {
				continue
			}
			for _, a := range ss.Addresses {
				out = append(out, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	return out
}

func nameOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
