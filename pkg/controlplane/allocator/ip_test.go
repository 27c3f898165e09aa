package allocator

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

const (
	ipPrefix   = "/networking.k8s.io/ipaddresses"
	cidrPrefix = "/networking.k8s.io/servicecidrs"
)

func ipStore(b *memory.Backend) storage.Interface {
	return b.Store(memory.Config{
		Codec:       scheme.Codecs.LegacyCodec(networkingv1.SchemeGroupVersion),
		NewFunc:     func() runtime.Object { return &networkingv1.IPAddress{} },
		NewListFunc: func() runtime.Object { return &networkingv1.IPAddressList{} },
	})
}

func cidrStore(b *memory.Backend) storage.Interface {
	return b.Store(memory.Config{
		Codec:       scheme.Codecs.LegacyCodec(networkingv1.SchemeGroupVersion),
		NewFunc:     func() runtime.Object { return &networkingv1.ServiceCIDR{} },
		NewListFunc: func() runtime.Object { return &networkingv1.ServiceCIDRList{} },
	})
}

// newIPs returns the allocator of cidr on b, with ServiceCIDRs read from
// b too.
func newIPs(t *testing.T, b *memory.Backend, cidr string) *IPs {
	t.Helper()
	a, err := NewIPs(IPConfig{
		Addresses: ipStore(b), AddressPrefix: ipPrefix,
		CIDRs: cidrStore(b), CIDRPrefix: cidrPrefix,
		Default: netip.MustParsePrefix(cidr),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func addServiceCIDR(t *testing.T, b *memory.Backend, sc *networkingv1.ServiceCIDR) {
	t.Helper()
	if err := cidrStore(b).Create(t.Context(), cidrPrefix+"/"+sc.Name, sc, nil); err != nil {
		t.Fatal(err)
	}
}

func ref(name string) *networkingv1.ParentReference { return ServiceRef("ns", name) }

func TestIPRangeSize(t *testing.T) {
	// Expected sizes and offsets: upstream's ipallocator (hostsPerNetwork,
	// calculateRangeOffset of KEP-3070), kubernetes v1.37.
	for _, tc := range []struct {
		cidr   string
		size   uint64
		offset uint64
		first  string
	}{
		{"10.0.0.0/24", 254, 16, "10.0.0.1"},
		{"10.0.0.0/30", 2, 0, "10.0.0.1"},
		{"10.0.0.0/28", 14, 16, "10.0.0.1"},
		{"192.168.0.0/16", 65534, 256, "192.168.0.1"},
		{"10.0.0.0/20", 4094, 256, "10.0.0.1"},
		{"fd00::/120", 255, 16, "fd00::1"},
		{"fd00::/108", 1<<20 - 1, 256, "fd00::1"},
		{"fd00::/64", 1<<63 - 1, 256, "fd00::1"},
	} {
		t.Run(tc.cidr, func(t *testing.T) {
			a := newIPs(t, newBackend(t), tc.cidr)
			if got := a.Size(); got != tc.size {
				t.Errorf("got size %d, want %d", got, tc.size)
			}
			if got := rangeOffset(a.CIDR()); got != tc.offset {
				t.Errorf("got range offset %d, want %d", got, tc.offset)
			}
			if got := a.First().String(); got != tc.first {
				t.Errorf("got first %s, want %s", got, tc.first)
			}
		})
	}
	for _, cidr := range []string{"10.0.0.0/32", "10.0.0.0/31", "fd00::/128"} {
		if _, err := NewIPs(IPConfig{Addresses: ipStore(newBackend(t)), Default: netip.MustParsePrefix(cidr)}); err == nil {
			t.Errorf("%s: got no error, want one", cidr)
		}
	}
}

func TestIPAllocate(t *testing.T) {
	ctx := t.Context()
	b := newBackend(t)
	a := newIPs(t, b, "10.0.0.0/24")
	// Messages: upstream's ipallocator errors (interfaces.go): a taken
	// address is ErrAllocated, one in no ServiceCIDR (the network and
	// broadcast addresses are in none) ErrMismatchedNetwork.
	for _, tc := range []struct {
		ip      string
		wantErr string
	}{
		{"10.0.0.10", ""},
		{"10.0.0.10", "provided IP is already allocated"},
		{"10.0.0.1", ""}, // the "kubernetes" Service's, but can be asked for
		{"10.0.0.0", "the provided network does not match the current range"},
		{"10.0.0.255", "the provided network does not match the current range"},
		{"10.0.1.1", "the provided network does not match the current range"},
		{"fd00::1", "the provided network does not match the current range"},
		{"10.0.0.254", ""},
	} {
		err := a.Allocate(ctx, netip.MustParseAddr(tc.ip), ref("web"), false)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.wantErr {
			t.Errorf("allocate %s: got error %q, want %q", tc.ip, got, tc.wantErr)
		}
	}
	if err := a.Allocate(ctx, netip.MustParseAddr("10.0.0.10"), ref("x"), false); !errors.Is(err, ErrAllocated) {
		t.Errorf("got %v, want ErrAllocated", err)
	}
	// The IPAddress object, as upstream's allocator writes it.
	var got networkingv1.IPAddress
	if err := ipStore(b).Get(ctx, ipPrefix+"/10.0.0.10", storage.GetOptions{}, &got); err != nil {
		t.Fatal(err)
	}
	if got.UID == "" || got.CreationTimestamp.IsZero() || got.ResourceVersion == "" {
		t.Errorf("got metadata %+v, want uid, creationTimestamp and resourceVersion set", got.ObjectMeta)
	}
	// The managed fields are kube-apiserver v1.37.2's (`kubectl get
	// ipaddress -o json --show-managed-fields`), time aside: its allocator
	// creates the object through the loopback client.
	want := networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: "10.0.0.10", Labels: map[string]string{
			"ipaddress.kubernetes.io/ip-family":  "IPv4",
			"ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
		}, ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "kube-apiserver", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "networking.k8s.io/v1", FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:ipaddress.kubernetes.io/ip-family":{},"f:ipaddress.kubernetes.io/managed-by":{}}},` +
				`"f:spec":{"f:parentRef":{".":{},"f:name":{},"f:namespace":{},"f:resource":{}}}}`)},
		}}},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "ns", Name: "web"}},
	}
	for i := range got.ManagedFields {
		if got.ManagedFields[i].Time == nil {
			t.Errorf("managed fields entry %d has no time", i)
		}
		got.ManagedFields[i].Time = nil
	}
	got.TypeMeta, got.UID, got.CreationTimestamp, got.ResourceVersion = metav1.TypeMeta{}, "", metav1.Time{}, ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IPAddress (-want +got):\n%s", diff)
	}
	// A dry run checks but takes nothing.
	if err := a.Allocate(ctx, netip.MustParseAddr("10.0.0.20"), ref("x"), true); err != nil {
		t.Errorf("dry run: %v", err)
	}
	if has, _ := a.Has(ctx, netip.MustParseAddr("10.0.0.20")); has {
		t.Error("got 10.0.0.20 allocated after a dry run, want free")
	}
	// As upstream's dry-run allocator (ipallocator.go, allocateService
	// with dryRun, v1.37.2): a taken address passes, one out of the range
	// fails with ErrNotInRange's message.
	if err := a.Allocate(ctx, netip.MustParseAddr("10.0.0.10"), ref("x"), true); err != nil {
		t.Errorf("dry run of a taken IP: got %v, want nil", err)
	}
	var nir *ErrNotInRange
	if err := a.Allocate(ctx, netip.MustParseAddr("10.1.0.10"), ref("x"), true); !errors.As(err, &nir) ||
		err.Error() != "the provided IP (10.1.0.10) is not in the valid range. The range of valid IPs is 10.0.0.0/24" {
		t.Errorf("dry run out of the range: got %v", err)
	}
	if err := a.Release(ctx, netip.MustParseAddr("10.0.0.10")); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, netip.MustParseAddr("10.0.0.10")); err != nil {
		t.Errorf("second release: got %v, want nil", err)
	}
	if err := a.Allocate(ctx, netip.MustParseAddr("10.0.0.10"), ref("web"), false); err != nil {
		t.Errorf("after release: %v", err)
	}
	// An IPAddress written by someone else is taken, but not the
	// allocator's.
	other := &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: "10.0.0.30"},
		Spec:       networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "gateway.networking.k8s.io", Resource: "gateways", Name: "gw"}},
	}
	if err := ipStore(b).Create(ctx, ipPrefix+"/10.0.0.30", other, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Allocate(ctx, netip.MustParseAddr("10.0.0.30"), ref("x"), false); !errors.Is(err, ErrAllocated) {
		t.Errorf("address of another owner: got %v, want ErrAllocated", err)
	}
	all, err := a.Allocated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{}
	for ip, al := range all {
		owners[ip.String()] = al.Owner
		if al.Created.IsZero() || al.ResourceVersion == "" {
			t.Errorf("%s: got %+v, want created and resourceVersion", ip, al)
		}
	}
	wantOwners := map[string]string{"10.0.0.1": "services/ns/web", "10.0.0.10": "services/ns/web", "10.0.0.254": "services/ns/web"}
	if diff := cmp.Diff(wantOwners, owners); diff != "" {
		t.Errorf("allocated (-want +got):\n%s", diff)
	}
}

func TestIPExhaustion(t *testing.T) {
	ctx := t.Context()
	a := newIPs(t, newBackend(t), "10.0.0.0/29") // .1-.6; .1 reserved
	seen := map[netip.Addr]bool{}
	for i := range 5 {
		ip, err := a.AllocateNext(ctx, ref(fmt.Sprint(i)), false)
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[ip] || ip == a.First() {
			t.Fatalf("got %s twice or the reserved address", ip)
		}
		seen[ip] = true
	}
	if _, err := a.AllocateNext(ctx, ref("x"), false); !errors.Is(err, ErrFull) || err.Error() != "range is full" {
		t.Errorf("got %v, want range is full", err)
	}
	// A dry run answers the network address, full or not (upstream's
	// allocateNextService with dryRun, v1.37.2).
	if ip, err := a.AllocateNext(ctx, ref("x"), true); err != nil || ip != a.CIDR().Addr() {
		t.Errorf("dry run: got %v, %v, want %v", ip, err, a.CIDR().Addr())
	}
	// The reserved address is still free, and can be asked for.
	if err := a.Allocate(ctx, a.First(), ref("kubernetes"), false); err != nil {
		t.Errorf("reserved address: %v", err)
	}
}

// TestIPUpperRangeFirst: dynamic allocation takes the upper part of the
// range first (KEP-3070), leaving the lower 16 addresses of a /24 for
// static ones until the rest is full.
func TestIPUpperRangeFirst(t *testing.T) {
	ctx := t.Context()
	a := newIPs(t, newBackend(t), "10.0.0.0/27") // 30 addresses; lower part .1-.16
	for i := range 14 {
		ip, err := a.AllocateNext(ctx, ref(fmt.Sprint(i)), false)
		if err != nil {
			t.Fatal(err)
		}
		if ip.Less(netip.MustParseAddr("10.0.0.17")) {
			t.Fatalf("allocation %d got %s from the lower part while the upper one has room", i, ip)
		}
	}
	ip, err := a.AllocateNext(ctx, ref("low"), false)
	if err != nil {
		t.Fatal(err)
	}
	if !ip.Less(netip.MustParseAddr("10.0.0.17")) || ip == a.First() {
		t.Errorf("got %s once the upper part is full, want one of 10.0.0.2-10.0.0.16", ip)
	}
}

// TestIPRestart: allocations are objects in storage, so a new allocator
// (a restarted or second kapi) on the same storage sees them.
func TestIPRestart(t *testing.T) {
	ctx := t.Context()
	b := newBackend(t)
	first := newIPs(t, b, "10.0.0.0/28")
	var taken []netip.Addr
	for range 6 {
		ip, err := first.AllocateNext(ctx, ref("before"), false)
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, ip)
	}
	second := newIPs(t, b, "10.0.0.0/28")
	for _, ip := range taken {
		if err := second.Allocate(ctx, ip, ref("after"), false); !errors.Is(err, ErrAllocated) {
			t.Errorf("allocate %s again after restart: got %v, want ErrAllocated", ip, err)
		}
	}
	for range 13 - 6 {
		ip, err := second.AllocateNext(ctx, ref("after"), false)
		if err != nil {
			t.Fatal(err)
		}
		for _, old := range taken {
			if ip == old {
				t.Fatalf("got %s again after restart", ip)
			}
		}
	}
	if _, err := second.AllocateNext(ctx, ref("after"), false); !errors.Is(err, ErrFull) {
		t.Errorf("got %v, want ErrFull", err)
	}
}

func serviceCIDR(name string, ready metav1.ConditionStatus, cidrs ...string) *networkingv1.ServiceCIDR {
	sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	if ready != "" {
		sc.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: ready, Reason: "Test", LastTransitionTime: metav1.Now()}}
	}
	return sc
}

// TestServiceCIDRsExtendPool: usable ServiceCIDRs (no Ready condition or
// Ready=True, not being deleted) of the allocator's family add their
// ranges to the pool, as upstream's MetaAllocator.
func TestServiceCIDRsExtendPool(t *testing.T) {
	ctx := t.Context()
	b := newBackend(t)
	a := newIPs(t, b, "10.0.0.0/29") // 5 dynamic addresses
	addServiceCIDR(t, b, serviceCIDR("extra", metav1.ConditionTrue, "10.1.0.0/29", "fd00:1::/120"))
	addServiceCIDR(t, b, serviceCIDR("no-condition", "", "10.2.0.0/30"))
	addServiceCIDR(t, b, serviceCIDR("not-ready", metav1.ConditionFalse, "10.3.0.0/24"))
	deleting := serviceCIDR("deleting", metav1.ConditionTrue, "10.4.0.0/24")
	now := metav1.NewTime(time.Now())
	deleting.DeletionTimestamp = &now
	deleting.Finalizers = []string{ServiceCIDRFinalizer}
	addServiceCIDR(t, b, deleting)
	// An IPv6 allocator ignores IPv4 ranges and IPv6 ones shorter than /64.
	v6 := newIPs(t, b, "fd00::/120")
	addServiceCIDR(t, b, serviceCIDR("v6-short", "", "fd01::/48"))
	addServiceCIDR(t, b, serviceCIDR("v6", "", "fd02::/64"))
	for ip, want := range map[string]error{"fd01::5": ErrMismatchedNetwork, "fd02::5": nil, "fd00:1::7": nil, "10.1.0.4": ErrMismatchedNetwork} {
		if err := v6.Allocate(ctx, netip.MustParseAddr(ip), ref("s6"), false); !errors.Is(err, want) {
			t.Errorf("IPv6 allocate %s: got %v, want %v", ip, err, want)
		}
	}

	for _, tc := range []struct {
		ip      string
		wantErr error
	}{
		{"10.1.0.3", nil},
		{"10.2.0.2", nil},
		{"10.1.0.0", ErrMismatchedNetwork},
		{"10.1.0.7", ErrMismatchedNetwork},
		{"10.3.0.5", ErrMismatchedNetwork},
		{"10.4.0.5", ErrMismatchedNetwork},
		{"fd00:1::5", ErrMismatchedNetwork}, // another family
	} {
		if err := a.Allocate(ctx, netip.MustParseAddr(tc.ip), ref("s"), false); !errors.Is(err, tc.wantErr) {
			t.Errorf("allocate %s: got %v, want %v", tc.ip, err, tc.wantErr)
		}
	}
	// 5 from the default range, then 5 from extra and 1 from no-condition
	// (one of each taken above); then full.
	got := map[string]int{}
	for range 5 + 5 + 1 {
		ip, err := a.AllocateNext(ctx, ref("s"), false)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		for _, p := range []string{"10.0.0.0/29", "10.1.0.0/29", "10.2.0.0/30"} {
			if netip.MustParsePrefix(p).Contains(ip) {
				got[p]++
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"10.0.0.0/29": 5, "10.1.0.0/29": 5, "10.2.0.0/30": 1}, got); diff != "" {
		t.Errorf("allocations per range (-want +got):\n%s", diff)
	}
	if _, err := a.AllocateNext(ctx, ref("s"), false); !errors.Is(err, ErrFull) {
		t.Errorf("got %v, want ErrFull", err)
	}
}

func TestCanDeleteServiceCIDR(t *testing.T) {
	managed := func(ip string) networkingv1.IPAddress {
		return networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: ip, Labels: map[string]string{
			networkingv1.LabelManagedBy: ControllerName,
		}}}
	}
	unmanaged := networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.1.0.9"}}
	kubernetes := *serviceCIDR("kubernetes", "", "10.0.0.0/24")
	target := *serviceCIDR("target", "", "10.1.0.0/24")
	parent := *serviceCIDR("parent", "", "10.0.0.0/8")
	twin := *serviceCIDR("twin", "", "10.1.0.0/24")
	overlap := *serviceCIDR("overlap", "", "10.1.0.0/25")
	// Cases: upstream's servicecidrs controller canDeleteCIDR
	// (pkg/controller/servicecidrs, v1.37) and its tests.
	for _, tc := range []struct {
		name string
		all  []networkingv1.ServiceCIDR
		ips  []networkingv1.IPAddress
		want bool
	}{
		{"no addresses", []networkingv1.ServiceCIDR{kubernetes, target}, nil, true},
		{"address only in it", []networkingv1.ServiceCIDR{kubernetes, target}, []networkingv1.IPAddress{managed("10.1.0.5")}, false},
		{"address elsewhere", []networkingv1.ServiceCIDR{kubernetes, target}, []networkingv1.IPAddress{managed("10.0.0.5")}, true},
		{"not managed by the allocator", []networkingv1.ServiceCIDR{kubernetes, target}, []networkingv1.IPAddress{unmanaged}, true},
		{"contained in a larger one", []networkingv1.ServiceCIDR{kubernetes, target, parent}, []networkingv1.IPAddress{managed("10.1.0.5")}, true},
		{"same range twice", []networkingv1.ServiceCIDR{kubernetes, target, twin}, []networkingv1.IPAddress{managed("10.1.0.5")}, true},
		{"address in an overlapping one", []networkingv1.ServiceCIDR{kubernetes, target, overlap}, []networkingv1.IPAddress{managed("10.1.0.5")}, true},
		{"address outside the overlapping one", []networkingv1.ServiceCIDR{kubernetes, target, overlap}, []networkingv1.IPAddress{managed("10.1.0.200")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CanDeleteServiceCIDR(&target, tc.all, tc.ips); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// BenchmarkIPAllocateNext: one dynamic allocation on the memory backend
// (a ServiceCIDR list, then an IPAddress create; the /16 keeps random
// picks from colliding), released again so the range never fills.
func BenchmarkIPAllocateNext(b *testing.B) {
	bk := memory.NewBackend(memory.BackendConfig{})
	b.Cleanup(func() { _ = bk.Close() })
	a, err := NewIPs(IPConfig{Addresses: ipStore(bk), AddressPrefix: ipPrefix, CIDRs: cidrStore(bk), CIDRPrefix: cidrPrefix, Default: netip.MustParsePrefix("10.96.0.0/16")})
	if err != nil {
		b.Fatal(err)
	}
	if err := cidrStore(bk).Create(b.Context(), cidrPrefix+"/kubernetes", serviceCIDR("kubernetes", metav1.ConditionTrue, "10.96.0.0/16"), nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ip, err := a.AllocateNext(b.Context(), ref("bench"), false)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Release(b.Context(), ip); err != nil {
			b.Fatal(err)
		}
	}
}
