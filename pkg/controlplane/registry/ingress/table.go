package ingress

import (
	"fmt"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// TableConvertor renders ingresses as upstream's printers (printIngress):
// NAME CLASS HOSTS ADDRESS PORTS AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
		{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
		{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
		{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		ing, ok := obj.(*networkingv1.Ingress)
		if !ok {
			return nil, false
		}
		class := "<none>"
		if ing.Spec.IngressClassName != nil {
			class = *ing.Spec.IngressClassName
		}
		ports := "80"
		if len(ing.Spec.TLS) != 0 {
			ports = "80, 443"
		}
		return []any{ing.Name, class, formatHosts(ing.Spec.Rules), formatAddress(ing.Status.LoadBalancer), ports, table.Since(ing.CreationTimestamp)}, true
	},
}

// formatHosts lists the first three rules' hosts ("*" when none has one),
// then "+ N more..." counted over all rules.
func formatHosts(rules []networkingv1.IngressRule) string {
	const max = 3
	var list []string
	more := false
	for _, r := range rules {
		if len(list) == max {
			more = true
		}
		if !more && r.Host != "" {
			list = append(list, r.Host)
		}
	}
	if len(list) == 0 {
		return "*"
	}
	out := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", out, len(rules)-max)
	}
	return out
}

// formatAddress lists the load balancer's IPs (or hostnames), sorted and
// unique; the server renders the wide form, untruncated.
func formatAddress(s networkingv1.IngressLoadBalancerStatus) string {
	var out []string
	for _, i := range s.Ingress {
		switch {
		case i.IP != "":
			out = append(out, i.IP)
		case i.Hostname != "":
			out = append(out, i.Hostname)
		}
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ",")
}
