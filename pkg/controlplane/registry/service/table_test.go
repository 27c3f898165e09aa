package service

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServiceTable(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-2 * time.Hour))
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, CreationTimestamp: created} }
	list := &corev1.ServiceList{Items: []corev1.Service{
		{ObjectMeta: meta("web"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.0.0.5"},
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}}, Selector: map[string]string{"app": "web"}}},
		{ObjectMeta: meta("np"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.0.0.6"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}, ExternalIPs: []string{"192.0.2.1", "192.0.2.2"}}},
		{ObjectMeta: meta("lb"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.7"},
			Ports: []corev1.ServicePort{{Port: 443, NodePort: 31443, Protocol: corev1.ProtocolTCP}}}},
		{ObjectMeta: meta("lb-ready"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.8"}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.9"}, {Hostname: "lb.example.com"}}}}},
		{ObjectMeta: meta("ext"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}},
		{ObjectMeta: meta("headless"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"None"}, Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}},
	}}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
		if c.Name == "Selector" && c.Priority != 1 {
			t.Errorf("got Selector priority %d, want 1 (wide only)", c.Priority)
		}
	}
	if got, want := strings.Join(cols, ","), "Name,Type,Cluster-IP,External-IP,Port(s),Age,Selector"; got != want {
		t.Errorf("got columns %s, want %s", got, want)
	}
	want := [][]any{
		{"web", "ClusterIP", "10.0.0.5", "<none>", "80/TCP,53/UDP", "120m", "app=web"},
		{"np", "NodePort", "10.0.0.6", "192.0.2.1,192.0.2.2", "80:30080/TCP", "120m", "<none>"},
		{"lb", "LoadBalancer", "10.0.0.7", "<pending>", "443:31443/TCP", "120m", "<none>"},
		{"lb-ready", "LoadBalancer", "10.0.0.8", "203.0.113.9,lb.example.com", "<none>", "120m", "<none>"},
		{"ext", "ExternalName", "<none>", "example.com", "<none>", "120m", "<none>"},
		{"headless", "ClusterIP", "None", "<none>", "80/TCP", "120m", "<none>"},
	}
	for i, row := range tbl.Rows {
		if !slices.Equal(row.Cells, want[i]) {
			t.Errorf("row %d: got %v, want %v", i, row.Cells, want[i])
		}
	}
}
