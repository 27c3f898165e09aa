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

func newPorts(t *testing.T, b *memory.Backend, pr PortRange) *Ports {
	t.Helper()
	a, err := NewPorts(leaseStore(b), pr)
	if err != nil {
		t.Fatal(err)
	}
	return a
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
				ip, err := ips[w%len(ips)].AllocateNext(ctx, ServiceRef("ns", fmt.Sprint(w)), false)
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
