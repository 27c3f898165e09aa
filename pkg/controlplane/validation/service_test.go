package validation

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validService is a defaulted, allocated ClusterIP service.
func validService() *corev1.Service {
	single := corev1.IPFamilyPolicySingleStack
	cluster := corev1.ServiceInternalTrafficPolicyCluster
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeClusterIP,
			ClusterIP:             "10.0.0.5",
			ClusterIPs:            []string{"10.0.0.5"},
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:        &single,
			Selector:              map[string]string{"app": "web"},
			Ports:                 []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
			SessionAffinity:       corev1.ServiceAffinityNone,
			InternalTrafficPolicy: &cluster,
		},
	}
}

func TestValidateService(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Service)
		want   []string
	}{
		{"valid", func(*corev1.Service) {}, nil},
		{"bad name", func(s *corev1.Service) { s.Name = "Web" }, []string{invalid + " metadata.name"}},
		{"no ports", func(s *corev1.Service) { s.Spec.Ports = nil }, []string{required + " spec.ports"}},
		{"headless without ports", func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.Ports = "None", []string{"None"}, nil
		}, nil},
		{"unnamed ports", func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 81, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(81)})
		}, []string{required + " spec.ports[0].name", required + " spec.ports[1].name"}},
		{"duplicate port names", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
				{Name: "a", Port: 81, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(81)},
			}
		}, []string{"FieldValueDuplicate spec.ports[1].name"}},
		{"duplicate ports", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
				{Name: "b", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(81)},
			}
		}, []string{"FieldValueDuplicate spec.ports[1]"}},
		{"port out of range", func(s *corev1.Service) { s.Spec.Ports[0].Port = 70000 }, []string{invalid + " spec.ports[0].port"}},
		{"bad protocol", func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "ICMP" }, []string{unsupported + " spec.ports[0].protocol"}},
		{"named target port", func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("http") }, nil},
		{"bad target port name", func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("not_valid") }, []string{invalid + " spec.ports[0].targetPort"}},
		{"bad type", func(s *corev1.Service) { s.Spec.Type = "Magic" }, []string{unsupported + " spec.type"}},
		{"nodePort on ClusterIP", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30001 }, []string{forbidden + " spec.ports[0].nodePort"}},
		{"bad selector", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"a b": "c"} }, []string{invalid + " spec.selector"}},
		{"bad affinity", func(s *corev1.Service) { s.Spec.SessionAffinity = "Sticky" }, []string{unsupported + " spec.sessionAffinity"}},
		{"client IP affinity without config", func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP },
			[]string{required + " spec.sessionAffinityConfig"}},
		{"client IP affinity timeout", func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(90000))}}
		}, []string{invalid + " spec.sessionAffinityConfig.clientIP.timeoutSeconds"}},
		{"clusterIPs mismatch", func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.0.0.6"} }, []string{invalid + " spec.clusterIPs"}},
		{"bad cluster IP", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "x", []string{"x"} }, []string{invalid + " spec.clusterIPs[0]"}},
		{"two IPv4 cluster IPs", func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.0.0.5", "10.0.0.6"} }, []string{invalid + " spec.clusterIPs"}},
		{"family mismatch", func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} },
			[]string{invalid + " spec.clusterIPs[0]"}},
		{"headless NodePort", func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ServiceTypeNodePort, "None", []string{"None"}
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		}, []string{invalid + " spec.clusterIP"}},
		{"externalTrafficPolicy on ClusterIP", func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal },
			[]string{invalid + " spec.externalTrafficPolicy"}},
		{"NodePort without externalTrafficPolicy", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort },
			[]string{required + " spec.externalTrafficPolicy"}},
		{"LoadBalancer", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			s.Spec.HealthCheckNodePort = 30100
			s.Spec.AllocateLoadBalancerNodePorts = &yes
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"}
		}, nil},
		{"LoadBalancer kubelet port", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
			s.Spec.AllocateLoadBalancerNodePorts = &yes
			s.Spec.Ports[0].Port = 10250
		}, []string{invalid + " spec.ports[0]"}},
		{"LoadBalancer without allocateLoadBalancerNodePorts", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		}, []string{required + " spec.allocateLoadBalancerNodePorts"}},
		// kube-apiserver v1.37.2 answers spec.LoadBalancerSourceRanges[0]:
		// Invalid value: "bogus": must be a valid CIDR value, ... (each range
		// at its index).
		{"source ranges on ClusterIP", func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"nope"} },
			[]string{forbidden + " spec.LoadBalancerSourceRanges", invalid + " spec.LoadBalancerSourceRanges[0]"}},
		{"healthCheckNodePort on ClusterIP", func(s *corev1.Service) { s.Spec.HealthCheckNodePort = 30000 },
			[]string{invalid + " spec.healthCheckNodePort"}},
		{"no internalTrafficPolicy", func(s *corev1.Service) { s.Spec.InternalTrafficPolicy = nil }, []string{required + " spec.internalTrafficPolicy"}},
		{"loopback external IP", func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"127.0.0.1"} },
			[]string{invalid + " spec.externalIPs[0]", required + " spec.externalTrafficPolicy"}},
		{"ExternalName", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com.", SessionAffinity: corev1.ServiceAffinityNone}
		}, nil},
		{"ExternalName without name", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, SessionAffinity: corev1.ServiceAffinityNone}
		}, []string{required + " spec.externalName"}},
		{"ExternalName with cluster IP", func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
		}, []string{forbidden + " spec.clusterIPs", forbidden + " spec.ipFamilies", forbidden + " spec.ipFamilyPolicy"}},
		{"bad traffic distribution", func(s *corev1.Service) { s.Spec.TrafficDistribution = ptr("Anywhere") },
			[]string{unsupported + " spec.trafficDistribution"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validService()
			tc.mutate(s)
			checkErrs(t, ValidateService(s), tc.want...)
		})
	}
}

func TestValidateServiceUpdate(t *testing.T) {
	old := validService()
	old.ResourceVersion = "1"
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Service)
		want   []string
	}{
		{"same", func(*corev1.Service) {}, nil},
		{"cluster IP changed", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.9", []string{"10.0.0.9"} },
			[]string{invalid + " spec.clusterIPs[0]"}},
		{"to ExternalName", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com", SessionAffinity: corev1.ServiceAffinityNone}
		}, nil},
		{"family changed", func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies = "fd00::5", []string{"fd00::5"}, []corev1.IPFamily{corev1.IPv6Protocol}
		}, []string{invalid + " spec.clusterIPs[0]", invalid + " spec.ipFamilies[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := old.DeepCopy()
			tc.mutate(s)
			checkErrs(t, ValidateServiceUpdate(s, old), tc.want...)
		})
	}
	checkDetail(t, ValidateServiceUpdate(func() *corev1.Service {
		s := old.DeepCopy()
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.9", []string{"10.0.0.9"}
		return s
	}(), old), "spec.clusterIPs[0]", "may not change once set")
}

// The expected errors are kube-apiserver v1.37.2's answers to the same
// status patches (ValidateLoadBalancerStatus; checked side by side,
// 2026-11-27): ipMode without an IP is Forbidden, ingress on a service
// that is not a LoadBalancer is Forbidden and nothing else is checked.
func TestValidateServiceStatus(t *testing.T) {
	old := validService()
	old.ResourceVersion = "1"
	old.Spec.Type = corev1.ServiceTypeLoadBalancer
	s := old.DeepCopy()
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
		{IP: "192.0.2.1", IPMode: ptr(corev1.LoadBalancerIPModeVIP)},
		{Hostname: "1.2.3.4"},
		{IPMode: ptr(corev1.LoadBalancerIPModeProxy)},
		{IP: "192.0.2.2", IPMode: ptr(corev1.LoadBalancerIPMode("Bogus"))},
		{IP: "192.0.2.3", IPMode: ptr(corev1.LoadBalancerIPModeVIP), Ports: []corev1.PortStatus{{Port: 0, Protocol: "X"}}},
	}
	checkErrs(t, ValidateServiceStatusUpdate(s, old),
		invalid+" status.loadBalancer.ingress[1].hostname", forbidden+" status.loadBalancer.ingress[2].ipMode",
		unsupported+" status.loadBalancer.ingress[3].ipMode")
	s.Spec.Type = corev1.ServiceTypeClusterIP
	checkErrs(t, ValidateServiceStatusUpdate(s, old), forbidden+" status.loadBalancer.ingress")
}

func TestValidateEndpoints(t *testing.T) {
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Subsets: []corev1.EndpointSubset{{
			Addresses:         []corev1.EndpointAddress{{IP: "10.1.0.1", Hostname: "a", NodeName: ptr("node-1")}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "169.254.0.1"}, {IP: "0.0.0.0"}, {IP: "fd00::1", Hostname: "Bad_Host"}},
			Ports:             []corev1.EndpointPort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}, {Name: "x", Port: 81, Protocol: "ICMP", AppProtocol: ptr("a/b/c")}},
		}},
	}
	checkErrs(t, ValidateEndpoints(ep),
		invalid+" subsets[0].notReadyAddresses[0].ip",
		invalid+" subsets[0].notReadyAddresses[1].ip",
		invalid+" subsets[0].notReadyAddresses[2].hostname",
		unsupported+" subsets[0].ports[1].protocol",
		invalid+" subsets[0].ports[1].appProtocol",
	)
	checkDetail(t, ValidateEndpoints(ep), "subsets[0].notReadyAddresses[0].ip", "link-local range")
}

func TestValidateEndpointSlice(t *testing.T) {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-1", Namespace: "ns", ResourceVersion: "1"},
		AddressType: discoveryv1.AddressTypeIPv6,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"fd00::1"}, Hostname: ptr("a"), NodeName: ptr("node"), Zone: ptr("zone-a"),
				Hints: &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "z"}, {Name: "z"}}}},
			{Addresses: []string{"10.0.0.1", "::1"}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: ptr(""), Protocol: ptr(corev1.ProtocolTCP)}},
	}
	checkErrs(t, ValidateEndpointSlice(s),
		"FieldValueDuplicate endpoints[0].hints.forZones[1].name",
		// The family error is reported at the list (kube-apiserver v1.37.2
		// answers endpoints[0].addresses: Invalid value: "10.0.0.1": must be
		// an IPv6 address).
		invalid+" endpoints[1].addresses",
		invalid+" endpoints[1].addresses[1]",
	)
	old := s.DeepCopy()
	s.AddressType = discoveryv1.AddressTypeFQDN
	s.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"a.example.com"}}}
	checkErrs(t, ValidateEndpointSliceUpdate(s, old), invalid+" addressType")
}

// FuzzValidateService decodes arbitrary JSON as a Service and validates it
// (create, update against itself and a valid service, status): validation
// must never panic, whatever the input.
func FuzzValidateService(f *testing.F) {
	seed, _ := json.Marshal(validService())
	f.Add(seed)
	f.Add([]byte(`{"metadata":{"name":"a"},"spec":{"type":"ExternalName","externalName":"x.","clusterIPs":["None","1.2.3.4","fd00::1"]}}`))
	f.Add([]byte(`{"spec":{"ports":[{"port":0,"targetPort":"","nodePort":-1}],"ipFamilies":["IPv7","IPv7"],"ipFamilyPolicy":"x","sessionAffinity":"ClientIP","sessionAffinityConfig":{}}}`))
	f.Add([]byte(`{"spec":{"type":"LoadBalancer","loadBalancerSourceRanges":[""],"externalIPs":["::"],"clusterIP":"None","clusterIPs":[]}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"service.beta.kubernetes.io/load-balancer-source-ranges":",,"}},"status":{"loadBalancer":{"ingress":[{"ipMode":"VIP"}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s corev1.Service
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		errs := ValidateService(&s)
		ValidateServiceUpdate(&s, &s)
		ValidateServiceUpdate(&s, validService())
		ValidateServiceUpdate(validService(), &s)
		ValidateServiceStatusUpdate(&s, &s)
		for _, e := range errs {
			if e.Field == "" || strings.TrimSpace(e.Error()) == "" {
				t.Errorf("got an error without a field or message: %#v", e)
			}
		}
	})
}

// TestLoadBalancerSourceRanges: kube-apiserver v1.37.2 answered a
// LoadBalancer with [" 10.0.0.1/8", "bogus"] with these two errors; an
// update keeps a range the old service had even if no longer valid.
func TestLoadBalancerSourceRanges(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerSourceRanges: []string{" 10.0.0.1/8", "bogus"}}}
	var got []string
	for _, e := range validateLoadBalancerSourceRanges(svc, nil) {
		got = append(got, e.Error())
	}
	want := []string{
		`spec.LoadBalancerSourceRanges[0]: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length`,
		`spec.LoadBalancerSourceRanges[1]: Invalid value: "bogus": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("create: got %q, want %q", got, want)
	}
	old := &corev1.Service{Spec: corev1.ServiceSpec{LoadBalancerSourceRanges: []string{"10.0.0.1/8"}}}
	got = got[:0]
	for _, e := range validateLoadBalancerSourceRanges(svc, old) {
		got = append(got, e.Error())
	}
	if !slices.Equal(got, want[1:]) {
		t.Errorf("update: got %q, want %q", got, want[1:])
	}
}

// TestEndpointAddressMessages: kube-apiserver v1.37.2's answers, verbatim.
func TestEndpointAddressMessages(t *testing.T) {
	render := func(errs field.ErrorList) string {
		var out []string
		for _, e := range errs {
			out = append(out, e.Error())
		}
		return strings.Join(out, ", ")
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "e2", Namespace: "ns"},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"fd00::1", "010.0.0.1", "bad", "127.0.0.1"}}},
	}
	want := `endpoints[0].addresses: Invalid value: "fd00::1": must be an IPv4 address, ` +
		`endpoints[0].addresses[1]: Invalid value: "010.0.0.1": must not have leading 0s, ` +
		`endpoints[0].addresses[2]: Invalid value: "bad": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), ` +
		`endpoints[0].addresses[3]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`
	if got := render(ValidateEndpointSlice(slice)); got != want {
		t.Errorf("slice:\n got  %s\n want %s", got, want)
	}
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "e2", Namespace: "ns"},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "010.0.0.1"}, {IP: "127.0.0.1"}, {IP: "bad"}},
			Ports:     []corev1.EndpointPort{{Port: 1, Protocol: corev1.ProtocolTCP}},
		}},
	}
	want = `subsets[0].addresses[0].ip: Invalid value: "010.0.0.1": must not have leading 0s, ` +
		`subsets[0].addresses[1].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128), ` +
		`subsets[0].addresses[2].ip: Invalid value: "bad": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), ` +
		`subsets[0].addresses[2].ip: Invalid value: "bad": must be a valid IP address`
	if got := render(ValidateEndpoints(ep)); got != want {
		t.Errorf("endpoints:\n got  %s\n want %s", got, want)
	}
}
