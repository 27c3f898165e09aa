package service

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var specDoc = corev1.ServiceSpec{}.SwaggerDoc()

// TableConvertor renders services as kubectl shows them: NAME TYPE
// CLUSTER-IP EXTERNAL-IP PORT(S) AGE, and SELECTOR with -o wide.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Type", Type: "string", Description: specDoc["type"]},
		{Name: "Cluster-IP", Type: "string", Description: specDoc["clusterIP"]},
		{Name: "External-IP", Type: "string", Description: specDoc["externalIPs"]},
		{Name: "Port(s)", Type: "string", Description: specDoc["ports"]},
		table.AgeColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: specDoc["selector"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		svc, ok := obj.(*corev1.Service)
		if !ok {
			return nil, false
		}
		clusterIP := "<none>"
		if len(svc.Spec.ClusterIPs) > 0 {
			clusterIP = svc.Spec.ClusterIPs[0]
		}
		ports := portString(svc.Spec.Ports)
		if ports == "" {
			ports = "<none>"
		}
		return []any{svc.Name, string(svc.Spec.Type), clusterIP, externalIP(svc), ports,
			table.Since(svc.CreationTimestamp), labels.FormatLabels(svc.Spec.Selector)}, true
	},
}

// externalIP is kubectl's EXTERNAL-IP (as the server renders it, wide):
// external IPs, a LoadBalancer's ingress IPs or hostnames (<pending>
// without any), an ExternalName's name.
func externalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lb := loadBalancerIPs(svc.Status.LoadBalancer)
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(append(lb, svc.Spec.ExternalIPs...), ",")
		}
		if len(lb) > 0 {
			return strings.Join(lb, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// loadBalancerIPs returns the sorted, distinct ingress IPs (or hostnames).
func loadBalancerIPs(s corev1.LoadBalancerStatus) []string {
	var out []string
	for _, ing := range s.Ingress {
		v := ing.IP
		if v == "" {
			v = ing.Hostname
		}
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// portString renders ports as kubectl: "80/TCP", "80:30080/TCP".
func portString(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}
