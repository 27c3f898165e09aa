package networking

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Expected errors are upstream's (kubernetes/kubernetes v1.37
// pkg/apis/networking/validation/validation.go and its tests), written
// "<type> <field>: <detail>".

func errStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s: %s", string(e.Type), e.Field, e.Detail))
	}
	return out
}

func check[T any](t *testing.T, valid func() T, validate func(T) field.ErrorList, cases []struct {
	name   string
	mutate func(T)
	want   []string
}) {
	t.Helper()
	if errs := validate(valid()); len(errs) != 0 {
		t.Fatalf("valid object: %v", errs)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := valid()
			tc.mutate(obj)
			if diff := cmp.Diff(tc.want, errStrings(validate(obj))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

type tcase[T any] = struct {
	name   string
	mutate func(T)
	want   []string
}

func validIngress() *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "minimal-ingress", Namespace: "default"},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{"foo.bar.com"}, SecretName: "tls"}},
			Rules: []networkingv1.IngressRule{{
				Host: "foo.bar.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/testpath", PathType: ptr.To(networkingv1.PathTypePrefix),
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "test", Port: networkingv1.ServiceBackendPort{Number: 80}}},
				}}}},
			}},
		},
	}
}

func path0(i *networkingv1.Ingress) *networkingv1.HTTPIngressPath {
	return &i.Spec.Rules[0].HTTP.Paths[0]
}

func TestValidateIngress(t *testing.T) {
	check(t, validIngress, ValidateIngressCreate, []tcase[*networkingv1.Ingress]{
		{"no rules nor default backend", func(i *networkingv1.Ingress) { i.Spec.Rules = nil },
			[]string{"FieldValueInvalid spec: either `defaultBackend` or `rules` must be specified"}},
		{"relative path", func(i *networkingv1.Ingress) { path0(i).Path = "testpath" },
			[]string{"FieldValueInvalid spec.rules[0].http.paths[0].path: must be an absolute path"}},
		{"path with //", func(i *networkingv1.Ingress) { path0(i).Path = "/a//b" },
			[]string{"FieldValueInvalid spec.rules[0].http.paths[0].path: must not contain '//'"}},
		{"path ending /..", func(i *networkingv1.Ingress) { path0(i).Path = "/a/.." },
			[]string{"FieldValueInvalid spec.rules[0].http.paths[0].path: cannot end with '/..'"}},
		{"no pathType", func(i *networkingv1.Ingress) { path0(i).PathType = nil },
			[]string{"FieldValueRequired spec.rules[0].http.paths[0].pathType: pathType must be specified"}},
		{"bad pathType", func(i *networkingv1.Ingress) { path0(i).PathType = ptr.To[networkingv1.PathType]("Regex") },
			[]string{`FieldValueNotSupported spec.rules[0].http.paths[0].pathType: supported values: "Exact", "ImplementationSpecific", "Prefix"`}},
		{"no paths", func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths = nil },
			[]string{"FieldValueRequired spec.rules[0].http.paths: "}},
		{"IP host", func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "10.0.0.1" },
			[]string{"FieldValueInvalid spec.rules[0].host: must be a DNS name, not an IP address"}},
		{"bad wildcard host", func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "foo.*.com" },
			[]string{"FieldValueInvalid spec.rules[0].host: a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
		{"both port name and number", func(i *networkingv1.Ingress) { path0(i).Backend.Service.Port.Name = "http" },
			[]string{"FieldValueInvalid spec.rules[0].http.paths[0].backend: cannot set both port name & port number"}},
		{"no port", func(i *networkingv1.Ingress) { path0(i).Backend.Service.Port.Number = 0 },
			[]string{"FieldValueRequired spec.rules[0].http.paths[0].backend: port name or number is required"}},
		{"port out of range", func(i *networkingv1.Ingress) { path0(i).Backend.Service.Port.Number = 70000 },
			[]string{"FieldValueInvalid spec.rules[0].http.paths[0].backend.service.port.number: must be between 1 and 65535, inclusive"}},
		{"no service name", func(i *networkingv1.Ingress) { path0(i).Backend.Service.Name = "" },
			[]string{"FieldValueRequired spec.rules[0].http.paths[0].backend.service.name: "}},
		{"no backend", func(i *networkingv1.Ingress) { path0(i).Backend.Service = nil },
			[]string{"FieldValueInvalid spec.rules[0].http.paths[0].backend: resource or service backend is required"}},
		{"both backends", func(i *networkingv1.Ingress) {
			path0(i).Backend.Resource = &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}
		}, []string{"FieldValueInvalid spec.rules[0].http.paths[0].backend: cannot set both resource and service backends"}},
		{"resource backend without kind", func(i *networkingv1.Ingress) {
			path0(i).Backend.Service = nil
			path0(i).Backend.Resource = &corev1.TypedLocalObjectReference{Name: "b"}
		}, []string{"FieldValueRequired spec.rules[0].http.paths[0].backend.resource.kind: kind is required"}},
		{"bad class name", func(i *networkingv1.Ingress) { i.Spec.IngressClassName = ptr.To("Nginx") },
			[]string{"FieldValueInvalid spec.ingressClassName: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
		{"annotation and class differ", func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{AnnotationIngressClass: "other"}
		}, []string{"FieldValueInvalid annotations.kubernetes.io/ingress.class: must match `ingressClassName` when both are specified"}},
		{"bad TLS secret name", func(i *networkingv1.Ingress) { i.Spec.TLS[0].SecretName = "Bad_Secret" },
			[]string{"FieldValueInvalid spec.tls[0].secretName: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
	})
}

func TestValidateIngressUpdateAndStatus(t *testing.T) {
	old := validIngress()
	old.Spec.TLS[0].SecretName = "Legacy_Name"
	upd := old.DeepCopy()
	upd.ResourceVersion, old.ResourceVersion = "1", "1"
	if errs := ValidateIngressUpdate(upd, old); len(errs) != 0 {
		t.Errorf("an invalid secret name the stored Ingress had is kept: %v", errs)
	}
	st := validIngress()
	st.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "300.1.1.1"}, {Hostname: "10.0.0.1"}}
	got := errStrings(ValidateIngressStatusUpdateFields(st, validIngress()))
	want := []string{
		"FieldValueInvalid status.loadBalancer.ingress[0].ip: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
		"FieldValueInvalid status.loadBalancer.ingress[1].hostname: must be a DNS name, not an IP address",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status errors (-want +got):\n%s", diff)
	}
}

func validIngressClass() *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "external-lb"},
		Spec: networkingv1.IngressClassSpec{
			Controller: "example.com/ingress-controller",
			Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb", Scope: ptr.To("Cluster")},
		},
	}
}

func TestValidateIngressClass(t *testing.T) {
	check(t, validIngressClass, ValidateIngressClass, []tcase[*networkingv1.IngressClass]{
		{"controller not domain-prefixed", func(c *networkingv1.IngressClass) { c.Spec.Controller = "nginx" },
			[]string{"FieldValueInvalid spec.controller: must be a domain-prefixed path (such as \"acme.io/foo\")"}},
		{"controller too long", func(c *networkingv1.IngressClass) { c.Spec.Controller = "example.com/" + strings.Repeat("a", 250) },
			[]string{"FieldValueTooLong spec.controller: may not be more than 250 bytes"}},
		{"no scope", func(c *networkingv1.IngressClass) { c.Spec.Parameters.Scope = nil },
			[]string{"FieldValueRequired spec.parameters.scope: "}},
		{"bad scope", func(c *networkingv1.IngressClass) { c.Spec.Parameters.Scope = ptr.To("Global") },
			[]string{`FieldValueNotSupported spec.parameters.scope: supported values: "Cluster", "Namespace"`}},
		{"namespace scope without namespace", func(c *networkingv1.IngressClass) { c.Spec.Parameters.Scope = ptr.To("Namespace") },
			[]string{"FieldValueRequired spec.parameters.namespace: `parameters.scope` is set to 'Namespace'"}},
		{"cluster scope with namespace", func(c *networkingv1.IngressClass) { c.Spec.Parameters.Namespace = ptr.To("ns") },
			[]string{"FieldValueForbidden spec.parameters.namespace: `parameters.scope` is set to 'Cluster'"}},
		{"no kind", func(c *networkingv1.IngressClass) { c.Spec.Parameters.Kind = "" },
			// v1.37.2: +k8s:required (beta), "spec.parameters.kind: Required value".
			[]string{"FieldValueRequired spec.parameters.kind: "}},
		{"no name", func(c *networkingv1.IngressClass) { c.Spec.Parameters.Name = "" },
			[]string{"FieldValueRequired spec.parameters.name: "}},
		{"bad name", func(c *networkingv1.IngressClass) { c.Name = "External_LB" },
			[]string{"FieldValueInvalid metadata.name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
	})
	old, upd := validIngressClass(), validIngressClass()
	old.ResourceVersion, upd.ResourceVersion = "1", "1"
	upd.Spec.Controller = "example.com/other"
	if diff := cmp.Diff([]string{"FieldValueInvalid spec.controller: field is immutable"}, errStrings(ValidateIngressClassUpdate(upd, old))); diff != "" {
		t.Errorf("controller change (-want +got):\n%s", diff)
	}
}

func validNetworkPolicy() *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "test-network-policy", Namespace: "default"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"role": "db"}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "172.17.0.0/16", Except: []string{"172.17.1.0/24"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(6379))}},
			}},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
}

func TestValidateNetworkPolicy(t *testing.T) {
	port := func(np *networkingv1.NetworkPolicy) *networkingv1.NetworkPolicyPort {
		return &np.Spec.Ingress[0].Ports[0]
	}
	validate := func(np *networkingv1.NetworkPolicy) field.ErrorList {
		return ValidateNetworkPolicy(np, NetworkPolicyOptions{})
	}
	check(t, validNetworkPolicy, validate, []tcase[*networkingv1.NetworkPolicy]{
		{"bad protocol", func(np *networkingv1.NetworkPolicy) { port(np).Protocol = ptr.To[corev1.Protocol]("ICMP") },
			[]string{`FieldValueNotSupported spec.ingress[0].ports[0].protocol: supported values: "TCP", "UDP", "SCTP"`}},
		{"port out of range", func(np *networkingv1.NetworkPolicy) { port(np).Port = ptr.To(intstr.FromInt32(0)) },
			[]string{"FieldValueInvalid spec.ingress[0].ports[0].port: must be between 1 and 65535, inclusive"}},
		{"endPort below port", func(np *networkingv1.NetworkPolicy) { port(np).EndPort = ptr.To[int32](10) },
			[]string{"FieldValueInvalid spec.ingress[0].ports[0].endPort: must be greater than or equal to `port`"}},
		{"endPort with a named port", func(np *networkingv1.NetworkPolicy) {
			port(np).Port = ptr.To(intstr.FromString("redis"))
			port(np).EndPort = ptr.To[int32](7000)
		}, []string{"FieldValueInvalid spec.ingress[0].ports[0].endPort: may not be specified when `port` is non-numeric"}},
		{"endPort without port", func(np *networkingv1.NetworkPolicy) {
			port(np).Port = nil
			port(np).EndPort = ptr.To[int32](7000)
		}, []string{"FieldValueInvalid spec.ingress[0].ports[0].endPort: may not be specified when `port` is not specified"}},
		{"empty peer", func(np *networkingv1.NetworkPolicy) { np.Spec.Ingress[0].From[0].IPBlock = nil },
			[]string{"FieldValueRequired spec.ingress[0].from[0]: must specify a peer"}},
		{"ipBlock and selector", func(np *networkingv1.NetworkPolicy) {
			np.Spec.Ingress[0].From[0].PodSelector = &metav1.LabelSelector{}
		}, []string{"FieldValueForbidden spec.ingress[0].from[0]: may not specify both ipBlock and another peer"}},
		{"except not inside cidr", func(np *networkingv1.NetworkPolicy) {
			np.Spec.Ingress[0].From[0].IPBlock.Except = []string{"10.0.0.0/24"}
		}, []string{"FieldValueInvalid spec.ingress[0].from[0].ipBlock.except[0]: must be a strict subset of `cidr`"}},
		{"no cidr", func(np *networkingv1.NetworkPolicy) { np.Spec.Ingress[0].From[0].IPBlock.CIDR = "" },
			[]string{"FieldValueRequired spec.ingress[0].from[0].ipBlock.cidr: "}},
		{"bad cidr", func(np *networkingv1.NetworkPolicy) { np.Spec.Ingress[0].From[0].IPBlock.CIDR = "172.17.0.0" },
			[]string{"FieldValueInvalid spec.ingress[0].from[0].ipBlock.cidr: must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"}},
		{"bad policy type", func(np *networkingv1.NetworkPolicy) { np.Spec.PolicyTypes = []networkingv1.PolicyType{"Both"} },
			[]string{`FieldValueNotSupported spec.policyTypes[0]: supported values: "Ingress", "Egress"`}},
		{"three policy types", func(np *networkingv1.NetworkPolicy) {
			np.Spec.PolicyTypes = []networkingv1.PolicyType{"Ingress", "Egress", "Ingress"}
		}, []string{"FieldValueInvalid spec.policyTypes: may not specify more than two policyTypes"}},
		{"bad selector", func(np *networkingv1.NetworkPolicy) {
			np.Spec.PodSelector = metav1.LabelSelector{MatchLabels: map[string]string{"role": "db!"}}
		}, []string{"FieldValueInvalid spec.podSelector.matchLabels: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"}},
		{"no namespace", func(np *networkingv1.NetworkPolicy) { np.Namespace = "" },
			[]string{"FieldValueRequired metadata.namespace: "}},
	})
}

func TestValidateIPAddressAndServiceCIDR(t *testing.T) {
	valid := func() *networkingv1.IPAddress {
		return &networkingv1.IPAddress{
			ObjectMeta: metav1.ObjectMeta{Name: "10.96.0.10"},
			Spec:       networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "kube-system", Name: "kube-dns"}},
		}
	}
	check(t, valid, ValidateIPAddress, []tcase[*networkingv1.IPAddress]{
		{"not canonical", func(ip *networkingv1.IPAddress) { ip.Name = "2001:db8:0::1" },
			[]string{`FieldValueInvalid metadata.name: must be in canonical form ("2001:db8::1")`}},
		{"not an IP", func(ip *networkingv1.IPAddress) { ip.Name = "kube-dns" },
			[]string{`FieldValueInvalid metadata.name: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`}},
		{"no parent", func(ip *networkingv1.IPAddress) { ip.Spec.ParentRef = nil },
			[]string{"FieldValueRequired spec.parentRef: "}},
		{"parent without resource and name", func(ip *networkingv1.IPAddress) {
			ip.Spec.ParentRef.Resource, ip.Spec.ParentRef.Name = "", ""
		}, []string{"FieldValueRequired spec.parentRef.resource: ", "FieldValueRequired spec.parentRef.name: "}},
		{"bad group", func(ip *networkingv1.IPAddress) { ip.Spec.ParentRef.Group = "Bad_Group" },
			[]string{"FieldValueInvalid spec.parentRef.group: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
		{"bad name segment", func(ip *networkingv1.IPAddress) { ip.Spec.ParentRef.Name = "a/b" },
			[]string{`FieldValueInvalid spec.parentRef.name: may not contain '/'`}},
	})
	old, upd := valid(), valid()
	old.ResourceVersion, upd.ResourceVersion = "1", "1"
	upd.Spec.ParentRef.Name = "other"
	if got := errStrings(ValidateIPAddressUpdate(upd, old)); len(got) != 1 || !strings.HasPrefix(got[0], "FieldValueInvalid spec.parentRef: field is immutable") {
		t.Errorf("parentRef change: %v", got)
	}

	cidr := func() *networkingv1.ServiceCIDR {
		return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "newcidr1"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/24"}}}
	}
	check(t, cidr, ValidateServiceCIDR, []tcase[*networkingv1.ServiceCIDR]{
		{"no cidrs", func(s *networkingv1.ServiceCIDR) { s.Spec.CIDRs = nil },
			[]string{"FieldValueRequired spec.cidrs: at least one CIDR required"}},
		{"three cidrs", func(s *networkingv1.ServiceCIDR) { s.Spec.CIDRs = []string{"10.0.0.0/24", "fd00::/120", "10.1.0.0/24"} },
			[]string{"FieldValueInvalid spec.cidrs: may only hold up to 2 values"}},
		{"same family", func(s *networkingv1.ServiceCIDR) { s.Spec.CIDRs = []string{"10.0.0.0/24", "10.1.0.0/24"} },
			[]string{"FieldValueInvalid spec.cidrs: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"}},
		// kube-apiserver v1.37.2 answered spec.cidrs[1]: Invalid value: "fd00::": must be a valid CIDR value, ...
		// (validateServiceCIDRSpec checks the CIDRs before their families).
		{"one of two not a cidr", func(s *networkingv1.ServiceCIDR) { s.Spec.CIDRs = []string{"10.0.0.0/24", "fd00::"} },
			[]string{"FieldValueInvalid spec.cidrs[1]: must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"}},
		{"not a cidr", func(s *networkingv1.ServiceCIDR) { s.Spec.CIDRs = []string{"10.0.0.1"} },
			[]string{"FieldValueInvalid spec.cidrs[0]: must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"}},
		{"not canonical", func(s *networkingv1.ServiceCIDR) { s.Spec.CIDRs = []string{"10.0.0.1/24"} },
			[]string{"FieldValueInvalid spec.cidrs[0]: must not have bits set beyond the prefix length"}},
	})
	oldC, updC := cidr(), cidr()
	oldC.ResourceVersion, updC.ResourceVersion = "1", "1"
	updC.Spec.CIDRs = []string{"10.96.0.0/24", "fd00:10:96::/112"}
	if errs := ValidateServiceCIDRUpdate(updC, oldC); len(errs) != 0 {
		t.Errorf("adding the other family: %v", errs)
	}
	updC.Spec.CIDRs = []string{"10.97.0.0/24"}
	if diff := cmp.Diff([]string{"FieldValueInvalid spec.cidrs[0]: field is immutable"}, errStrings(ValidateServiceCIDRUpdate(updC, oldC))); diff != "" {
		t.Errorf("changing a CIDR (-want +got):\n%s", diff)
	}
}
