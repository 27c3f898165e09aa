package allocator

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// PortKeyPrefix is the storage key prefix of NodePort allocations.
const PortKeyPrefix = "/ranges/servicenodeports"

// PortRange is a range of ports: Base to Base+Size-1.
type PortRange struct {
	Base int
	Size int
}

// DefaultNodePortRange is kube's --service-node-port-range: 30000-32767.
var DefaultNodePortRange = PortRange{Base: 30000, Size: 2768}

// String renders the range as kube does: "30000-32767".
func (r PortRange) String() string {
	return fmt.Sprintf("%d-%d", r.Base, r.Base+r.Size-1)
}

// Contains reports whether port is in the range.
func (r PortRange) Contains(port int) bool { return port >= r.Base && port < r.Base+r.Size }

// Ports allocates Service NodePorts from a PortRange.
type Ports struct {
	pr      PortRange
	r       keyedRange
	metrics *Metrics
}

// SetMetrics makes a record its allocations in m's
// kube_apiserver_nodeport_allocator_* metrics (nil: none). Call it before
// a is used.
func (a *Ports) SetMetrics(m *Metrics) { a.metrics = m }

// NewPorts returns the NodePort allocator of pr on s (storage of
// coordination.k8s.io/v1 Leases, see the package doc).
func NewPorts(s storage.Interface, pr PortRange) (*Ports, error) {
	if s == nil {
		return nil, errors.New("port allocator: storage is required")
	}
	if pr.Base < 1 || pr.Size < 1 || pr.Base+pr.Size-1 > 65535 {
		return nil, fmt.Errorf("port allocator: invalid range %s", pr)
	}
	a := &Ports{pr: pr}
	a.r = keyedRange{
		storage: s,
		prefix:  PortKeyPrefix,
		size:    pr.Size,
		name:    func(offset int) string { return strconv.Itoa(pr.Base + offset) },
		parse: func(name string) (int, bool) {
			p, err := strconv.Atoi(name)
			if err != nil || !pr.Contains(p) {
				return 0, false
			}
			return p - pr.Base, true
		},
		allocated: &allocatedError{"provided port is already allocated"},
	}
	return a, nil
}

// Range returns the range.
func (a *Ports) Range() PortRange { return a.pr }

// Allocate takes port for owner: an *ErrNotInRange outside the range,
// ErrAllocated if taken. A dry run only checks.
//
// As upstream's PortAllocator.Allocate, an allocation (not a dry run)
// counts with scope "static": a port outside the range, a taken one or a
// failed write as an error, a success as an allocation, with the gauges.
func (a *Ports) Allocate(ctx context.Context, port int, owner string, dryRun bool) error {
	m := a.metrics
	if dryRun {
		m = nil
	}
	if !a.pr.Contains(port) {
		m.portError(scopeStatic)
		return &ErrNotInRange{Value: strconv.Itoa(port), Kind: "port", ValidRange: a.pr.String()}
	}
	if err := a.r.allocate(ctx, port-a.pr.Base, owner, dryRun); err != nil {
		m.portError(scopeStatic)
		return err
	}
	if m != nil {
		m.portAllocation(scopeStatic)
		a.metrics.portsUsed(a)
	}
	return nil
}

// AllocateNext takes a free port for owner; ErrFull if there is none. A
// dry run returns a free port without taking it.
//
// As upstream's PortAllocator.AllocateNext, an allocation (not a dry run)
// counts with scope "dynamic": ErrFull or a failed write as an error, a
// success as an allocation, with the gauges (ports lost to a concurrent
// allocation on the way count nothing: upstream's bitmap picks a free
// one under its lock).
func (a *Ports) AllocateNext(ctx context.Context, owner string, dryRun bool) (int, error) {
	m := a.metrics
	if dryRun {
		m = nil
	}
	offset, err := a.r.next(ctx, owner, dryRun)
	if err != nil {
		m.portError(scopeDynamic)
		return 0, err
	}
	if m != nil {
		m.portAllocation(scopeDynamic)
		a.metrics.portsUsed(a)
	}
	return a.pr.Base + offset, nil
}

// Release frees port (nothing happens if it is not allocated or not in
// the range). A port in the range sets the gauges, as upstream's
// PortAllocator.Release (whether it was allocated or not).
func (a *Ports) Release(ctx context.Context, port int) error {
	if !a.pr.Contains(port) {
		return nil
	}
	if err := a.r.release(ctx, port-a.pr.Base); err != nil {
		return err
	}
	a.metrics.portsUsed(a)
	return nil
}

// Restore takes port for owner as Allocate does, but counts in no
// allocator metric: it is the repair's write of a port a Service holds
// without its allocation (upstream's repair rewrites the bitmap itself,
// not through the metered allocator).
func (a *Ports) Restore(ctx context.Context, port int, owner string) error {
	if !a.pr.Contains(port) {
		return &ErrNotInRange{Value: strconv.Itoa(port), Kind: "port", ValidRange: a.pr.String()}
	}
	return a.r.allocate(ctx, port-a.pr.Base, owner, false)
}

// RepairFound counts one problem the NodePort repair found, by upstream's
// type: "leak" (an allocation no Service holds, released), "repair" (a
// held port that was not allocated, restored), "outOfRange" (a held port
// outside the range), "duplicate" (a port two Services hold).
func (a *Ports) RepairFound(kind string) { a.metrics.portRepairError(kind) }

// RepairFailed counts one failed pass of the NodePort repair.
func (a *Ports) RepairFailed() { a.metrics.portRepairFailed() }

// used counts the allocated ports (upstream's Used of its bitmap, which
// it reads back from etcd with each change).
func (a *Ports) used(ctx context.Context) (int, error) {
	taken, err := a.r.list(ctx)
	if err != nil {
		return 0, err
	}
	return len(taken), nil
}

// Has reports whether port is allocated.
func (a *Ports) Has(ctx context.Context, port int) (bool, error) {
	if !a.pr.Contains(port) {
		return false, nil
	}
	return a.r.has(ctx, port-a.pr.Base)
}

// Allocated returns the allocated ports.
func (a *Ports) Allocated(ctx context.Context) (map[int]Allocation, error) {
	m, err := a.r.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int]Allocation, len(m))
	for offset, al := range m {
		out[a.pr.Base+offset] = al
	}
	return out, nil
}

// ReleaseIfUnchanged frees port if it is still the allocation al (as read
// by Allocated): a port released and taken again since is kept.
func (a *Ports) ReleaseIfUnchanged(ctx context.Context, port int, al Allocation) error {
	if !a.pr.Contains(port) {
		return nil
	}
	return a.r.releaseIfUnchanged(ctx, port-a.pr.Base, al)
}
