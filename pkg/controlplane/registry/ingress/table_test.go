package ingress

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Expected columns and cells are upstream's printers
// (kubernetes/kubernetes pkg/printers/internalversion/printers.go, v1.37).

var created = metav1.NewTime(time.Now().Add(-49 * time.Hour))

func row(t *testing.T, obj runtime.Object) (columns []string, cells []any) {
	t.Helper()
	tbl, err := TableConvertor.ConvertToTable(t.Context(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tbl.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	return columns, tbl.Rows[0].Cells
}

func TestTable(t *testing.T) {
	rule := func(host string) networkingv1.IngressRule { return networkingv1.IngressRule{Host: host} }
	cases := []struct {
		name string
		ing  *networkingv1.Ingress
		want []any
	}{
		{"default backend only", &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: created}},
			[]any{"a", "<none>", "*", "", "80", "2d1h"}},
		// Upstream's formatHosts: the first three hosts of the first
		// rules (an empty host is skipped but counted), then
		// "+ <rules - 3> more...".
		{"hosts, tls, class, addresses", &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: created},
			Spec: networkingv1.IngressSpec{
				IngressClassName: ptr.To("nginx"),
				TLS:              []networkingv1.IngressTLS{{}},
				Rules:            []networkingv1.IngressRule{rule("a.com"), rule(""), rule("b.com"), rule("c.com"), rule("d.com")},
			},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{
				{IP: "10.0.0.2"}, {Hostname: "lb.example.com"}, {IP: "10.0.0.1"}, {IP: "10.0.0.2"},
			}}},
		}, []any{"b", "nginx", "a.com,b.com,c.com + 2 more...", "10.0.0.1,10.0.0.2,lb.example.com", "80, 443", "2d1h"}},
	}
	for _, tc := range cases {
		cols, cells := row(t, tc.ing)
		if diff := cmp.Diff([]string{"Name", "Class", "Hosts", "Address", "Ports", "Age"}, cols); diff != "" {
			t.Errorf("columns (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(tc.want, cells); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// The deprecated class annotation draws upstream's warning on create only.
func TestWarnings(t *testing.T) {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/ingress.class": "nginx"}}}
	want := []string{`annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead`}
	if diff := cmp.Diff(want, Strategy.WarningsOnCreate(t.Context(), ing)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := Strategy.WarningsOnUpdate(t.Context(), ing, ing); got != nil {
		t.Errorf("update warnings %v", got)
	}
}
