package service

import (
	"encoding/json"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// FuzzServicePreparation runs what a create and an update do to a decoded
// Service before storage (defaults, clusterIP sync, IP family defaulting,
// the update's patching and dropping of type-dependent fields, validation)
// on arbitrary JSON: none of it may panic.
func FuzzServicePreparation(f *testing.F) {
	b := memory.NewBackend(memory.BackendConfig{})
	f.Cleanup(func() { _ = b.Close() })
	ips, err := allocator.NewIPs(allocator.IPConfig{Addresses: b.Store(memory.Config{}), AddressPrefix: "/ipaddresses", Default: netip.MustParsePrefix("10.0.0.0/24")})
	if err != nil {
		f.Fatal(err)
	}
	a := &Allocators{IPs: ips}
	old := svc("old", func(s *corev1.Service) {
		s.Namespace = "ns"
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.ClusterIP = "10.0.0.5"
		s.Spec.Ports[0].NodePort = 30001
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 30002
	})
	SetDefaults(old)
	normalizeClusterIPs(old, nil)
	if err := a.initIPFamilyFields(old, nil); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30001},{"port":80}]}}`))
	f.Add([]byte(`{"spec":{"clusterIP":"None","clusterIPs":["None","10.0.0.1"],"ipFamilies":["IPv6"],"ipFamilyPolicy":"PreferDualStack"}}`))
	f.Add([]byte(`{"spec":{"type":"ExternalName","clusterIP":"10.0.0.5","sessionAffinity":"ClientIP"}}`))
	f.Add([]byte(`{"spec":{"clusterIPs":["","fd00::1","1.2.3.4"],"ports":[{"targetPort":""}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var in corev1.Service
		if err := json.Unmarshal(data, &in); err != nil {
			return
		}
		create := in.DeepCopy()
		SetDefaults(create)
		normalizeClusterIPs(create, nil)
		if a.initIPFamilyFields(create, nil) == nil {
			validation.ValidateServiceFields(create)
		}
		upd := in.DeepCopy()
		SetDefaults(upd)
		patchAllocatedValues(upd, old)
		normalizeClusterIPs(upd, old)
		dropTypeDependentFields(upd, old)
		if a.initIPFamilyFields(upd, old) == nil {
			validation.ValidateServiceUpdateFields(upd, old)
			validation.ValidateServiceFields(upd)
		}
		serviceWarnings(upd)
		TableConvertor.Row(upd)
	})
}
