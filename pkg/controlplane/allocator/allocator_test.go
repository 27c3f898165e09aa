package allocator

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// newBackend returns a memory backend closed when the test ends; stores
// made on it share data, as several kapi processes on one etcd do.
func newBackend(t *testing.T) *memory.Backend {
	t.Helper()
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func leaseStore(b *memory.Backend) storage.Interface {
	return b.Store(memory.Config{
		Codec:       scheme.Codecs.LegacyCodec(coordinationv1.SchemeGroupVersion),
		NewFunc:     func() runtime.Object { return &coordinationv1.Lease{} },
		NewListFunc: func() runtime.Object { return &coordinationv1.LeaseList{} },
	})
}

func newIPs(t *testing.T, b *memory.Backend, cidr string) *IPs {
	t.Helper()
	a, err := NewIPs(leaseStore(b), netip.MustParsePrefix(cidr))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newPorts(t *testing.T, b *memory.Backend, pr PortRange) *Ports {
	t.Helper()
	a, err := NewPorts(leaseStore(b), pr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestIPRangeSize(t *testing.T) {
	for _, tc := range []struct {
		cidr  string
		size  int
		first string
	}{
		{"10.0.0.0/24", 254, "10.0.0.1"},
		{"10.0.0.0/30", 2, "10.0.0.1"},
		{"192.168.0.0/16", 65534, "192.168.0.1"},
		{"fd00::/120", 255, "fd00::1"},
		{"fd00::/64", 65536, "fd00::1"},
	} {
		t.Run(tc.cidr, func(t *testing.T) {
			a := newIPs(t, newBackend(t), tc.cidr)
			if got := a.Size(); got != tc.size {
				t.Errorf("got size %d, want %d", got, tc.size)
			}
			if got := a.First().String(); got != tc.first {
				t.Errorf("got first %s, want %s", got, tc.first)
			}
		})
	}
	if _, err := NewIPs(leaseStore(newBackend(t)), netip.MustParsePrefix("10.0.0.0/32")); err == nil {
		t.Error("got no error for a /32, want one")
	}
}

func TestIPAllocate(t *testing.T) {
	ctx := t.Context()
	a := newIPs(t, newBackend(t), "10.0.0.0/24")
	for _, tc := range []struct {
		ip      string
		wantErr string
	}{
		{"10.0.0.10", ""},
		{"10.0.0.10", "provided IP is already allocated"},
		{"10.0.0.1", ""}, // reserved for kubernetes, but can be asked for
		{"10.0.0.0", "the provided IP (10.0.0.0) is not in the valid range. The range of valid IPs is 10.0.0.0/24"},
		{"10.0.0.255", "the provided IP (10.0.0.255) is not in the valid range. The range of valid IPs is 10.0.0.0/24"},
		{"10.0.1.1", "the provided IP (10.0.1.1) is not in the valid range. The range of valid IPs is 10.0.0.0/24"},
		{"fd00::1", "the provided IP (fd00::1) is not in the valid range. The range of valid IPs is 10.0.0.0/24"},
		{"10.0.0.254", ""},
	} {
		err := a.Allocate(ctx, netip.MustParseAddr(tc.ip), "test", false)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.wantErr {
			t.Errorf("allocate %s: got error %q, want %q", tc.ip, got, tc.wantErr)
		}
	}
	if err := a.Allocate(ctx, netip.MustParseAddr("10.0.0.10"), "x", false); !errors.Is(err, ErrAllocated) {
		t.Errorf("got %v, want ErrAllocated", err)
	}
	var nir *ErrNotInRange
	if err := a.Allocate(ctx, netip.MustParseAddr("10.1.0.10"), "x", false); !errors.As(err, &nir) {
		t.Errorf("got %v, want *ErrNotInRange", err)
	}
	// A dry run checks but takes nothing.
	if err := a.Allocate(ctx, netip.MustParseAddr("10.0.0.20"), "x", true); err != nil {
		t.Errorf("dry run: %v", err)
	}
	if has, _ := a.Has(ctx, netip.MustParseAddr("10.0.0.20")); has {
		t.Error("got 10.0.0.20 allocated after a dry run, want free")
	}
	if err := a.Allocate(ctx, netip.MustParseAddr("10.0.0.10"), "x", true); !errors.Is(err, ErrAllocated) {
		t.Errorf("dry run of a taken IP: got %v, want ErrAllocated", err)
	}
	if err := a.Release(ctx, netip.MustParseAddr("10.0.0.10")); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, netip.MustParseAddr("10.0.0.10")); err != nil {
		t.Errorf("second release: got %v, want nil", err)
	}
	if err := a.Allocate(ctx, netip.MustParseAddr("10.0.0.10"), "test", false); err != nil {
		t.Errorf("after release: %v", err)
	}
	got, err := a.Allocated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[netip.MustParseAddr("10.0.0.1")].Owner != "test" || got[netip.MustParseAddr("10.0.0.1")].Created.IsZero() {
		t.Errorf("got allocated %v, want 10.0.0.1, 10.0.0.10, 10.0.0.254 owned by test", got)
	}
}

func TestIPExhaustion(t *testing.T) {
	ctx := t.Context()
	a := newIPs(t, newBackend(t), "10.0.0.0/29") // .1-.6; .1 reserved
	seen := map[netip.Addr]bool{}
	for i := range 5 {
		ip, err := a.AllocateNext(ctx, fmt.Sprint(i), false)
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[ip] || ip == a.First() {
			t.Fatalf("got %s twice or the reserved address", ip)
		}
		seen[ip] = true
	}
	if _, err := a.AllocateNext(ctx, "x", false); !errors.Is(err, ErrFull) || err.Error() != "range is full" {
		t.Errorf("got %v, want range is full", err)
	}
	if _, err := a.AllocateNext(ctx, "x", true); !errors.Is(err, ErrFull) {
		t.Errorf("dry run: got %v, want range is full", err)
	}
	// The reserved address is still free, and can be asked for.
	if err := a.Allocate(ctx, a.First(), "kubernetes", false); err != nil {
		t.Errorf("reserved address: %v", err)
	}
}

// TestIPRestart: allocations live in storage, so a new allocator (a
// restarted or second kapi) on the same storage sees them.
func TestIPRestart(t *testing.T) {
	ctx := t.Context()
	b := newBackend(t)
	first := newIPs(t, b, "10.0.0.0/28")
	var taken []netip.Addr
	for range 6 {
		ip, err := first.AllocateNext(ctx, "before", false)
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, ip)
	}
	second := newIPs(t, b, "10.0.0.0/28")
	for _, ip := range taken {
		if err := second.Allocate(ctx, ip, "after", false); !errors.Is(err, ErrAllocated) {
			t.Errorf("allocate %s again after restart: got %v, want ErrAllocated", ip, err)
		}
	}
	for range 13 - 6 {
		ip, err := second.AllocateNext(ctx, "after", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, old := range taken {
			if ip == old {
				t.Fatalf("got %s again after restart", ip)
			}
		}
	}
	if _, err := second.AllocateNext(ctx, "after", false); !errors.Is(err, ErrFull) {
		t.Errorf("got %v, want ErrFull", err)
	}
}

// TestConcurrentAllocation: many goroutines on several allocators sharing
// one storage never get the same value twice, and together take exactly
// the whole range.
func TestConcurrentAllocation(t *testing.T) {
	ctx := t.Context()
	b := newBackend(t)
	const workers = 40
	ips := []*IPs{newIPs(t, b, "10.0.0.0/24"), newIPs(t, b, "10.0.0.0/24"), newIPs(t, b, "10.0.0.0/24")}
	ports := []*Ports{newPorts(t, b, PortRange{30000, 300}), newPorts(t, b, PortRange{30000, 300})}
	var (
		mu       sync.Mutex
		gotIPs   = map[netip.Addr]int{}
		gotPorts = map[int]int{}
		wg       sync.WaitGroup
		errs     = make(chan error, workers)
	)
	for w := range workers {
		wg.Go(func() {
			for {
				ip, err := ips[w%len(ips)].AllocateNext(ctx, fmt.Sprint(w), false)
				if errors.Is(err, ErrFull) {
					break
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				gotIPs[ip]++
				mu.Unlock()
			}
			for {
				p, err := ports[w%len(ports)].AllocateNext(ctx, fmt.Sprint(w), false)
				if errors.Is(err, ErrFull) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				gotPorts[p]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(gotIPs) != 253 {
		t.Errorf("got %d distinct IPs, want 253 (the range but the reserved one)", len(gotIPs))
	}
	for ip, n := range gotIPs {
		if n != 1 {
			t.Errorf("got %s %d times, want once", ip, n)
		}
	}
	if len(gotPorts) != 300 {
		t.Errorf("got %d distinct ports, want 300", len(gotPorts))
	}
	for p, n := range gotPorts {
		if n != 1 {
			t.Errorf("got port %d %d times, want once", p, n)
		}
	}
}

func TestPorts(t *testing.T) {
	ctx := t.Context()
	a := newPorts(t, newBackend(t), PortRange{Base: 30000, Size: 3})
	if got := a.Range().String(); got != "30000-30002" {
		t.Errorf("got range %s, want 30000-30002", got)
	}
	for _, tc := range []struct {
		port    int
		wantErr string
	}{
		{30001, ""},
		{30001, "provided port is already allocated"},
		{29999, "provided port is not in the valid range. The range of valid ports is 30000-30002"},
		{30003, "provided port is not in the valid range. The range of valid ports is 30000-30002"},
	} {
		err := a.Allocate(ctx, tc.port, "t", false)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.wantErr {
			t.Errorf("allocate %d: got %q, want %q", tc.port, got, tc.wantErr)
		}
	}
	for range 2 {
		if _, err := a.AllocateNext(ctx, "t", false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.AllocateNext(ctx, "t", false); !errors.Is(err, ErrFull) {
		t.Errorf("got %v, want ErrFull", err)
	}
	if err := a.Release(ctx, 30001); err != nil {
		t.Fatal(err)
	}
	if p, err := a.AllocateNext(ctx, "t", false); err != nil || p != 30001 {
		t.Errorf("got %d, %v, want 30001", p, err)
	}
	if _, err := NewPorts(leaseStore(newBackend(t)), PortRange{Base: 65000, Size: 1000}); err == nil {
		t.Error("got no error for a range past 65535, want one")
	}
}
