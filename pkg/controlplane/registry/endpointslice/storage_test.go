package endpointslice

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func ptr[T any](v T) *T { return &v }

func TestEndpointSliceStore(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("discovery.k8s.io", "v1", "endpointslices", "ns")
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Port: ptr(int32(8080))}},
	}
	obj, err := store.Create(ctx, s, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*discoveryv1.EndpointSlice)
	if p := got.Ports[0]; p.Name == nil || *p.Name != "" || p.Protocol == nil || *p.Protocol != corev1.ProtocolTCP {
		t.Errorf("got port %+v, want name \"\" and protocol TCP defaulted", p)
	}
	if got.Generation != 1 {
		t.Errorf("got generation %d, want 1", got.Generation)
	}

	// addressType is immutable; a content change bumps the generation.
	upd := func(mutate func(*discoveryv1.EndpointSlice)) (*discoveryv1.EndpointSlice, error) {
		obj, _, err := store.Update(ctx, "web-abc", registrytest.Mutated{Mutate: func(o runtime.Object) { mutate(o.(*discoveryv1.EndpointSlice)) }},
			nil, nil, false, &metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*discoveryv1.EndpointSlice), nil
	}
	_, err = upd(func(s *discoveryv1.EndpointSlice) {
		s.AddressType = discoveryv1.AddressTypeFQDN
		s.Endpoints[0].Addresses = []string{"a.example.com"}
	})
	if got := registrytest.Causes(t, err); !slices.Equal(got, []string{"FieldValueInvalid addressType"}) {
		t.Errorf("got causes %v, want addressType immutable", got)
	}
	moved, err := upd(func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"10.1.0.2"} })
	if err != nil {
		t.Fatal(err)
	}
	if moved.Generation != 2 {
		t.Errorf("got generation %d, want 2", moved.Generation)
	}
	labelled, err := upd(func(s *discoveryv1.EndpointSlice) { s.Labels["x"] = "y" })
	if err != nil {
		t.Fatal(err)
	}
	if labelled.Generation != 2 {
		t.Errorf("got generation %d after a label change, want 2", labelled.Generation)
	}
	// No create on update.
	_, _, err = store.Update(ctx, "missing", registrytest.Updated{Obj: s}, nil, nil, false, &metav1.UpdateOptions{})
	if st := registrytest.Status(t, err); st.Code != 404 {
		t.Errorf("got %d, want 404", st.Code)
	}

	many := make([]discoveryv1.Endpoint, 1001)
	for i := range many {
		many[i] = discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.2.%d.%d", i/250, i%250+1)}}
	}
	for _, tc := range []struct {
		name string
		s    discoveryv1.EndpointSlice
		want []string
	}{
		{"no address type", discoveryv1.EndpointSlice{}, []string{"FieldValueRequired addressType"}},
		{"unknown address type", discoveryv1.EndpointSlice{AddressType: "IP"}, []string{"FieldValueNotSupported addressType"}},
		// At the list, sic: kube-apiserver v1.37.2 answers endpoints[0].addresses:
		// Invalid value: "fd00::1": must be an IPv4 address.
		{"ipv6 in ipv4", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"fd00::1"}}}},
			[]string{"FieldValueInvalid endpoints[0].addresses"}},
		{"loopback", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}}},
			[]string{"FieldValueInvalid endpoints[0].addresses[0]"}},
		{"bad fqdn", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeFQDN, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"nodots"}}}},
			[]string{"FieldValueInvalid endpoints[0].addresses[0]"}},
		{"no addresses", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{}}},
			[]string{"FieldValueRequired endpoints[0].addresses"}},
		{"too many endpoints", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: many},
			[]string{"FieldValueTooMany endpoints"}},
		{"duplicate port names", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{{Name: ptr("a"), Port: ptr(int32(1))}, {Name: ptr("a"), Port: ptr(int32(2))}}},
			[]string{"FieldValueDuplicate ports[1].name"}},
		{"bad protocol", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{{Protocol: ptr(corev1.Protocol("ICMP"))}}},
			[]string{"FieldValueNotSupported ports[0].protocol"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.s.DeepCopy()
			bad.Name = "bad"
			_, err := store.Create(ctx, bad, nil, &metav1.CreateOptions{})
			if got := registrytest.Causes(t, err); !slices.Equal(got, tc.want) {
				t.Errorf("got causes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEndpointSliceTable(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-time.Hour))
	list := &discoveryv1.EndpointSliceList{Items: []discoveryv1.EndpointSlice{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: created}, AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Port: ptr(int32(80))}, {Name: ptr("named")}, {}, {Port: ptr(int32(90))}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1", "10.0.0.2"}}, {Addresses: []string{"10.0.0.3"}}, {Addresses: []string{"10.0.0.4"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "empty", CreationTimestamp: created}, AddressType: discoveryv1.AddressTypeFQDN},
	}}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if got, want := strings.Join(cols, ","), "Name,AddressType,Ports,Endpoints,Age"; got != want {
		t.Errorf("got columns %s, want %s", got, want)
	}
	want := [][]any{
		{"a", "IPv4", "80,named,* + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...", "60m"},
		{"empty", "FQDN", "<unset>", "<unset>", "60m"},
	}
	for i, row := range tbl.Rows {
		if !slices.Equal(row.Cells, want[i]) {
			t.Errorf("row %d: got %v, want %v", i, row.Cells, want[i])
		}
	}
}

// TestEndpointSliceDeclarativeOrder checks whole error lists against
// kube-apiserver v1.37.2's answers to the same requests (kubectl,
// 2026-11-27): handwritten errors first (ports before endpoints, as
// upstream's ValidateEndpointSlice), then those of the beta declarative
// rules on addressType (+k8s:required, +k8s:enum, +k8s:immutable) and
// endpoints[].addresses (+k8s:required), in field order
// (k8s.io/kubernetes@v1.37.2 pkg/apis/discovery/v1/zz_generated.validations.go).
func TestEndpointSliceDeclarativeOrder(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("discovery.k8s.io", "v1", "endpointslices", "ns")
	causes := func(err error) []string {
		t.Helper()
		st := registrytest.Status(t, err)
		if st.Details == nil {
			t.Fatalf("no details: %v", err)
		}
		var got []string
		for _, c := range st.Details.Causes {
			got = append(got, c.Field+": "+c.Message)
		}
		return got
	}
	_, err = store.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "bad"},
		AddressType: "Foo",
		Endpoints:   []discoveryv1.Endpoint{{}, {Addresses: []string{"1.2.3.4"}, Hostname: ptr("A_B")}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("Bad_"), Port: ptr(int32(0)), Protocol: ptr(corev1.ProtocolTCP)}},
	}, nil, &metav1.CreateOptions{})
	want := []string{
		`ports[0].name: Invalid value: "Bad_": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		`endpoints[1].hostname: Invalid value: "A_B": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		`addressType: Unsupported value: "Foo": supported values: "FQDN", "IPv4", "IPv6"`,
		`endpoints[0].addresses: Required value`,
	}
	if got := causes(err); !slices.Equal(got, want) {
		t.Errorf("create causes:\n got  %q\n want %q", got, want)
	}

	if _, err := store.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "ok"},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"1.2.3.4"}}},
	}, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = store.Update(ctx, "ok", registrytest.Mutated{Mutate: func(o runtime.Object) {
		s := o.(*discoveryv1.EndpointSlice)
		s.AddressType = discoveryv1.AddressTypeIPv6
		s.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{}}}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	want = []string{`addressType: Invalid value: null: field is immutable`, `endpoints[0].addresses: Required value`}
	if got := causes(err); !slices.Equal(got, want) {
		t.Errorf("update causes:\n got  %q\n want %q", got, want)
	}
}
