package allocator

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/netip"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// IPKeyPrefix is the storage key prefix of ClusterIP allocations.
const IPKeyPrefix = "/ranges/serviceips"

// maxIPRangeSize bounds the addresses used of a large (IPv6) range, as
// kube's bitmap allocator does.
const maxIPRangeSize = 1 << 16

// IPs allocates Service ClusterIPs from a CIDR. The network address (and,
// for IPv4, the broadcast address) is never allocated; the first usable
// address is reserved for the "kubernetes" Service: AllocateNext never
// returns it, Allocate does.
type IPs struct {
	cidr  netip.Prefix
	base  netip.Addr // the first usable address (offset 0)
	r     keyedRange
	index map[string]int
}

// NewIPs returns the ClusterIP allocator of cidr on s (storage of
// coordination.k8s.io/v1 Leases, see the package doc).
func NewIPs(s storage.Interface, cidr netip.Prefix) (*IPs, error) {
	if s == nil {
		return nil, errors.New("ip allocator: storage is required")
	}
	if !cidr.IsValid() {
		return nil, fmt.Errorf("ip allocator: invalid range %v", cidr)
	}
	cidr = cidr.Masked()
	hostBits := cidr.Addr().BitLen() - cidr.Bits()
	size := maxIPRangeSize + 2
	if hostBits < 17 {
		size = 1 << hostBits
	}
	// Without the network address, and the broadcast address of IPv4.
	size--
	if cidr.Addr().Is4() {
		size--
	}
	if size < 1 {
		return nil, fmt.Errorf("ip allocator: range %v has no usable address", cidr)
	}
	size = min(size, maxIPRangeSize)
	a := &IPs{cidr: cidr, base: cidr.Addr().Next()}
	a.r = keyedRange{
		storage:   s,
		prefix:    IPKeyPrefix,
		size:      size,
		name:      func(offset int) string { return a.addr(offset).String() },
		parse:     a.parseName,
		skip:      func(offset int) bool { return offset == 0 },
		allocated: &allocatedError{"provided IP is already allocated"},
	}
	return a, nil
}

// CIDR returns the range.
func (a *IPs) CIDR() netip.Prefix { return a.cidr }

// Size returns how many addresses the range holds (the reserved one
// included).
func (a *IPs) Size() int { return a.r.size }

// First returns the first usable address: the "kubernetes" Service's.
func (a *IPs) First() netip.Addr { return a.base }

func (a *IPs) addr(offset int) netip.Addr {
	b := new(big.Int).SetBytes(a.base.AsSlice())
	b.Add(b, big.NewInt(int64(offset)))
	buf := make([]byte, a.base.BitLen()/8)
	b.FillBytes(buf)
	ip, _ := netip.AddrFromSlice(buf)
	return ip
}

// offset returns ip's offset in the range, or ok=false.
func (a *IPs) offset(ip netip.Addr) (int, bool) {
	ip = ip.Unmap()
	if !a.cidr.Contains(ip) || ip.BitLen() != a.base.BitLen() {
		return 0, false
	}
	d := new(big.Int).Sub(new(big.Int).SetBytes(ip.AsSlice()), new(big.Int).SetBytes(a.base.AsSlice()))
	if d.Sign() < 0 || d.Cmp(big.NewInt(int64(a.r.size))) >= 0 {
		return 0, false
	}
	return int(d.Int64()), true
}

func (a *IPs) parseName(name string) (int, bool) {
	ip, err := netip.ParseAddr(name)
	if err != nil {
		return 0, false
	}
	return a.offset(ip)
}

func (a *IPs) notInRange(ip netip.Addr) error {
	return &ErrNotInRange{Value: ip.String(), Kind: "IP", ValidRange: a.cidr.String()}
}

// Allocate takes ip for owner (e.g. "services/default/web"): an
// *ErrNotInRange outside the range, ErrAllocated if taken. A dry run only
// checks.
func (a *IPs) Allocate(ctx context.Context, ip netip.Addr, owner string, dryRun bool) error {
	offset, ok := a.offset(ip)
	if !ok {
		return a.notInRange(ip)
	}
	return a.r.allocate(ctx, offset, owner, dryRun)
}

// AllocateNext takes a free address for owner (never the reserved first
// one); ErrFull if there is none. A dry run returns a free address without
// taking it.
func (a *IPs) AllocateNext(ctx context.Context, owner string, dryRun bool) (netip.Addr, error) {
	offset, err := a.r.next(ctx, owner, dryRun)
	if err != nil {
		return netip.Addr{}, err
	}
	return a.addr(offset), nil
}

// Release frees ip (nothing happens if it is not allocated or not in the
// range).
func (a *IPs) Release(ctx context.Context, ip netip.Addr) error {
	offset, ok := a.offset(ip)
	if !ok {
		return nil
	}
	return a.r.release(ctx, offset)
}

// Has reports whether ip is allocated.
func (a *IPs) Has(ctx context.Context, ip netip.Addr) (bool, error) {
	offset, ok := a.offset(ip)
	if !ok {
		return false, nil
	}
	return a.r.has(ctx, offset)
}

// Allocated returns the allocated addresses.
func (a *IPs) Allocated(ctx context.Context) (map[netip.Addr]Allocation, error) {
	m, err := a.r.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[netip.Addr]Allocation, len(m))
	for offset, al := range m {
		out[a.addr(offset)] = al
	}
	return out, nil
}

// ReleaseIfUnchanged frees ip if it is still the allocation al (as read by
// Allocated): a value released and taken again since is kept.
func (a *IPs) ReleaseIfUnchanged(ctx context.Context, ip netip.Addr, al Allocation) error {
	offset, ok := a.offset(ip)
	if !ok {
		return nil
	}
	return a.r.releaseIfUnchanged(ctx, offset, al)
}
