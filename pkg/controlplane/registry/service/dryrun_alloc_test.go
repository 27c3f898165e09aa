package service

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServiceDryRunAllocations: what a dry-run create shows, as
// kubernetes v1.37.2's (and the reference's answers to the same
// creates): the ClusterIP dry-run allocator answers the range's network
// address, and checks only that a requested address is in the range
// (ipallocator.go, allocateService and allocateNextService with dryRun);
// the NodePort operation refuses a requested port allocated or shown
// before in the same write, in the range or not, and answers 32769, then
// one above the highest shown, for the others (portallocator/operation.go,
// Allocate and AllocateNext with dryRun).
func TestServiceDryRunAllocations(t *testing.T) {
	e := newEnv(t, "10.0.0.0/24", 100)
	taken := e.create(t, svc("taken", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.ClusterIP = "10.0.0.10"
		s.Spec.Ports[0].NodePort = 30010
	}))
	dry := &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	create := func(s *corev1.Service) (*corev1.Service, error) {
		obj, err := e.main.Create(ctx("ns"), s, nil, dry)
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.Service), nil
	}
	twoPorts := func(first int32) func(*corev1.Service) {
		return func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80, NodePort: first}, {Name: "b", Port: 81}}
		}
	}

	lb, err := create(svc("lb", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if lb.Spec.ClusterIP != "10.0.0.0" || lb.Spec.Ports[0].NodePort != 32769 || lb.Spec.Ports[1].NodePort != 32770 || lb.Spec.HealthCheckNodePort != 32771 {
		t.Errorf("load balancer: got %s, %d, %d, health check %d; want 10.0.0.0, 32769, 32770, 32771",
			lb.Spec.ClusterIP, lb.Spec.Ports[0].NodePort, lb.Spec.Ports[1].NodePort, lb.Spec.HealthCheckNodePort)
	}
	out, err := create(svc("out", twoPorts(40100)))
	if err != nil {
		t.Fatal(err)
	}
	if out.Spec.Ports[0].NodePort != 40100 || out.Spec.Ports[1].NodePort != 40101 {
		t.Errorf("ports out of the range: got %d, %d; want 40100, 40101", out.Spec.Ports[0].NodePort, out.Spec.Ports[1].NodePort)
	}
	if got, err := create(svc("ip", func(s *corev1.Service) { s.Spec.ClusterIP = taken.Spec.ClusterIP })); err != nil || got.Spec.ClusterIP != "10.0.0.10" {
		t.Errorf("taken ClusterIP: got %v, want it shown", err)
	}
	_, err = create(svc("ip", func(s *corev1.Service) { s.Spec.ClusterIP = "10.1.0.10" }))
	if want := `failed to allocate IP 10.1.0.10: the provided IP (10.1.0.10) is not in the valid range. The range of valid IPs is 10.0.0.0/24`; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("ClusterIP out of the range: got %v, want 422 %s", err, want)
	}
	_, err = create(svc("port", twoPorts(30010)))
	if want := `spec.ports[0].nodePort: Invalid value: 30010: provided port is already allocated`; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("taken NodePort: got %v, want 422 %s", err, want)
	}
	if ips, ports := e.allocatedCount(t); ips != 1 || ports != 1 {
		t.Errorf("got %d IPs, %d ports allocated, want the taken service's only", ips, ports)
	}
}
