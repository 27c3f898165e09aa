package endpoints

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func TestEndpointsStore(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	if got := store.ShortNames(); !slices.Equal(got, []string{"ep"}) {
		t.Errorf("got short names %v, want [ep]", got)
	}
	ctx := registrytest.Context("", "v1", "endpoints", "ns")
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Subsets: []corev1.EndpointSubset{
			{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.2"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 8080}}},
			{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 8080}}},
		},
	}
	obj, err := store.Create(ctx, ep, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*corev1.Endpoints)
	// Defaulted, not repacked: kube-apiserver v1.37.2 stored subsets
	// [{10.0.0.9,10.0.0.1 ports b,a} {10.0.0.5 ports b,a}] as given
	// (POSTed to the reference on 2026-11-27).
	want := []corev1.EndpointSubset{
		{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.2"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}},
		{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}},
	}
	if fmt.Sprint(got.Subsets) != fmt.Sprint(want) {
		t.Errorf("got subsets %v, want %v", got.Subsets, want)
	}

	for _, tc := range []struct {
		name   string
		subset corev1.EndpointSubset
		want   []string
	}{
		{"loopback", corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}}}, []string{"FieldValueInvalid subsets[0].addresses[0].ip"}},
		// Twice, in two wordings: kube-apiserver v1.37.2 answers "bad" with
		// "must be a valid IP address, (e.g. ...)" and "must be a valid IP address".
		{"not an ip", corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "host"}}},
			[]string{"FieldValueInvalid subsets[0].addresses[0].ip", "FieldValueInvalid subsets[0].addresses[0].ip"}},
		{"no address", corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Port: 80}}}, []string{"FieldValueRequired subsets[0]"}},
		{"port 0", corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}}, Ports: []corev1.EndpointPort{{Port: 0}}},
			[]string{"FieldValueInvalid subsets[0].ports[0].port"}},
		{"unnamed ports", corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}}, Ports: []corev1.EndpointPort{{Port: 80}, {Port: 81}}},
			[]string{"FieldValueRequired subsets[0].ports[0].name", "FieldValueRequired subsets[0].ports[1].name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Subsets: []corev1.EndpointSubset{tc.subset}}
			_, err := store.Create(ctx, bad, nil, &metav1.CreateOptions{})
			if got := registrytest.Causes(t, err); !slices.Equal(got, tc.want) {
				t.Errorf("got causes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEndpointsTable(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-time.Hour))
	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	list := &corev1.EndpointsList{Items: []corev1.Endpoints{
		{ObjectMeta: metav1.ObjectMeta{Name: "one", CreationTimestamp: created}, Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.5"), Ports: []corev1.EndpointPort{{Port: 8443}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "many", CreationTimestamp: created}, Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "fd00::5"), Ports: []corev1.EndpointPort{{Port: 80}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "headless", CreationTimestamp: created}, Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.7")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "none", CreationTimestamp: created}},
		{ObjectMeta: metav1.ObjectMeta{Name: "notready", CreationTimestamp: created}, Subsets: []corev1.EndpointSubset{{NotReadyAddresses: addrs("10.0.0.8"), Ports: []corev1.EndpointPort{{Port: 80}}}}},
	}}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if got, want := strings.Join(cols, ","), "Name,Endpoints,Age"; got != want {
		t.Errorf("got columns %s, want %s", got, want)
	}
	want := []string{
		"10.0.0.5:8443",
		"10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more...",
		"10.0.0.7",
		"<none>",
		"<none>",
	}
	for i, row := range tbl.Rows {
		if row.Cells[1] != want[i] || row.Cells[2] != "60m" {
			t.Errorf("row %d: got %v, want endpoints %q age 60m", i, row.Cells, want[i])
		}
	}
}
