package allocator

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// ControllerName is the value of the managed-by label of the IPAddresses
// the allocator writes (upstream's ipallocator.ControllerName).
const ControllerName = "ipallocator.k8s.io"

// ErrMismatchedNetwork is returned when a requested address is in no
// ServiceCIDR (upstream's MetaAllocator error).
var ErrMismatchedNetwork = errors.New("the provided network does not match the current range")

// IPConfig says where the ClusterIP allocator keeps its state.
type IPConfig struct {
	// Addresses is the storage of networking.k8s.io/v1 IPAddress objects
	// (the ipaddresses resource's), one key per address:
	// AddressPrefix/<address>. Required.
	Addresses     storage.Interface
	AddressPrefix string
	// CIDRs is the storage of networking.k8s.io/v1 ServiceCIDRs under
	// CIDRPrefix; nil allocates from Default only.
	CIDRs      storage.Interface
	CIDRPrefix string
	// Default is --service-cluster-ip-range (the "kubernetes"
	// ServiceCIDR's range). Its first address is the "kubernetes"
	// Service's: AllocateNext never hands it out.
	Default netip.Prefix
	// Metrics receives the kube_apiserver_clusterip_allocator_* metrics;
	// nil: none.
	Metrics *Metrics
}

// IPs allocates Service ClusterIPs as upstream's MultiCIDRServiceAllocator
// (GA since 1.33): each allocated address is an IPAddress object named by
// the address, whose parentRef is the Service, labelled with its IP family
// and managed-by ipallocator.k8s.io. Storage Create makes an allocation
// exclusive ("key exists" is "provided IP is already allocated"), so
// several kapi processes on one etcd, or a restarted one, never hand out
// an address twice. The pool is --service-cluster-ip-range plus every
// ServiceCIDR of the same family that is not being deleted and whose
// Ready condition is not False (upstream's isReady: no condition counts as
// ready).
type IPs struct {
	cfg    IPConfig
	family corev1.IPFamily
}

// NewIPs returns the ClusterIP allocator of cfg.
func NewIPs(cfg IPConfig) (*IPs, error) {
	if cfg.Addresses == nil {
		return nil, errors.New("ip allocator: IPAddress storage is required")
	}
	if !cfg.Default.IsValid() {
		return nil, fmt.Errorf("ip allocator: invalid range %v", cfg.Default)
	}
	cfg.Default = cfg.Default.Masked()
	if rangeSize(cfg.Default) < 1 {
		return nil, fmt.Errorf("ip allocator: range %v has no usable address", cfg.Default)
	}
	a := &IPs{cfg: cfg, family: corev1.IPv4Protocol}
	if cfg.Default.Addr().Is6() {
		a.family = corev1.IPv6Protocol
	}
	return a, nil
}

// CIDR returns --service-cluster-ip-range.
func (a *IPs) CIDR() netip.Prefix { return a.cfg.Default }

// Family returns the allocator's IP family.
func (a *IPs) Family() corev1.IPFamily { return a.family }

// Size returns how many addresses --service-cluster-ip-range holds (the
// reserved first one included).
func (a *IPs) Size() uint64 { return rangeSize(a.cfg.Default) }

// First returns the first usable address of --service-cluster-ip-range:
// the "kubernetes" Service's.
func (a *IPs) First() netip.Addr { return a.cfg.Default.Addr().Next() }

// ServiceRef is the parentRef of the IPAddress of a Service's ClusterIP.
func ServiceRef(namespace, name string) *networkingv1.ParentReference {
	return &networkingv1.ParentReference{Resource: "services", Namespace: namespace, Name: name}
}

// refString renders a parentRef as "services/<namespace>/<name>".
func refString(r *networkingv1.ParentReference) string {
	if r == nil {
		return ""
	}
	parts := []string{r.Resource}
	if r.Group != "" {
		parts[0] += "." + r.Group
	}
	if r.Namespace != "" {
		parts = append(parts, r.Namespace)
	}
	return strings.Join(append(parts, r.Name), "/")
}

func (a *IPs) key(ip netip.Addr) string { return path.Join(a.cfg.AddressPrefix, ip.String()) }

// rangeSize is the number of allocatable addresses of p: all but the
// network address and, for IPv4, the broadcast address; capped at
// MaxInt64 for large IPv6 prefixes.
func rangeSize(p netip.Prefix) uint64 {
	hostBits := p.Addr().BitLen() - p.Bits()
	if p.Addr().Is4() && hostBits < 2 || hostBits < 1 {
		return 0
	}
	if hostBits >= 63 {
		return math.MaxInt64
	}
	n := uint64(1)<<hostBits - 1
	if p.Addr().Is4() {
		n--
	}
	return n
}

// rangeOffset splits a range in a lower part, used for dynamic
// allocation only once the upper part is full, and an upper part (KEP-3070,
// upstream's calculateRangeOffset): 1/16th of the range, at least 16 and
// at most 256 addresses; none for ranges under 16 addresses.
func rangeOffset(p netip.Prefix) uint64 {
	hostBits := p.Addr().BitLen() - p.Bits()
	if hostBits < 4 {
		return 0
	}
	if hostBits >= 12 {
		return 256
	}
	return max(16, (uint64(1)<<hostBits)/16)
}

// inPrefix reports whether ip is an allocatable address of p (upstream's
// PrefixContainsIP: not the network address nor the IPv4 broadcast).
func inPrefix(p netip.Prefix, ip netip.Addr) bool {
	if !p.Contains(ip) || ip == p.Addr() {
		return false
	}
	if ip.Is4() && p.Bits() < 32 && ip == lastAddr(p) {
		return false
	}
	return true
}

// lastAddr is the last address of p (its broadcast address).
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	ip, _ := netip.AddrFromSlice(b)
	return ip
}

// addOffset returns base+off (off < 2^63).
func addOffset(base netip.Addr, off uint64) netip.Addr {
	if base.Is4() {
		b := base.As4()
		v := binary.BigEndian.Uint32(b[:]) + uint32(off)
		binary.BigEndian.PutUint32(b[:], v)
		return netip.AddrFrom4(b)
	}
	b := base.As16()
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	nlo := lo + off
	if nlo < lo {
		hi++
	}
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], nlo)
	return netip.AddrFrom16(b)
}

// pools returns the prefixes allocation may use: the default range first,
// then the usable ServiceCIDRs' prefixes of the allocator's family in
// storage (name) order, without duplicates. Upstream's MetaAllocator tries
// its allocators in map order; kapi's order is deterministic. unusable
// adds the prefixes of the ServiceCIDRs allocation may not use (being
// deleted, not ready), which upstream's MetaAllocator still releases in.
func (a *IPs) pools(ctx context.Context, unusable bool) ([]netip.Prefix, error) {
	out := []netip.Prefix{a.cfg.Default}
	if a.cfg.CIDRs == nil {
		return out, nil
	}
	// Read from the watch cache when there is one ("0": any state it
	// has), as upstream's allocator reads an informer's: a consistent
	// list would wait for the cache to catch up with etcd on every
	// allocation.
	var list networkingv1.ServiceCIDRList
	if err := a.cfg.CIDRs.GetList(ctx, a.cfg.CIDRPrefix, storage.ListOptions{Recursive: true, ResourceVersion: "0"}, &list); err != nil {
		return nil, fmt.Errorf("list servicecidrs: %w", err)
	}
	for i := range list.Items {
		sc := &list.Items[i]
		if !unusable && !CIDRUsable(sc) {
			continue
		}
		for _, s := range sc.Spec.CIDRs {
			p, err := netip.ParsePrefix(s)
			if err != nil || p.Addr().Is4() != (a.family == corev1.IPv4Protocol) {
				continue
			}
			if p.Addr().Is6() && p.Bits() < 64 {
				// Upstream makes no allocator for it ("shortest allowed
				// prefix length for service CIDR is 64").
				continue
			}
			p = p.Masked()
			if !containsPrefix(out, p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func containsPrefix(ps []netip.Prefix, p netip.Prefix) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// CIDRUsable reports whether allocation may use sc: not being deleted and
// its Ready condition, if any, True (upstream's MetaAllocator).
func CIDRUsable(sc *networkingv1.ServiceCIDR) bool {
	if sc.DeletionTimestamp != nil {
		return false
	}
	c := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	return c == nil || c.Status == metav1.ConditionTrue
}

// poolOf returns the first pool that holds ip.
func poolOf(pools []netip.Prefix, ip netip.Addr) (netip.Prefix, bool) {
	for _, p := range pools {
		if inPrefix(p, ip) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

func (a *IPs) newIPAddress(ip netip.Addr, ref *networkingv1.ParentReference) *networkingv1.IPAddress {
	obj := &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name:              ip.String(),
			UID:               uuid.NewUUID(),
			CreationTimestamp: metav1.Now(),
			Labels: map[string]string{
				networkingv1.LabelIPAddressFamily: string(a.family),
				networkingv1.LabelManagedBy:       ControllerName,
			},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: ref.DeepCopy()},
	}
	if e, ok := ipAddressFields(obj); ok {
		obj.ManagedFields = []metav1.ManagedFieldsEntry{e}
	}
	return obj
}

// create writes the IPAddress of ip.
func (a *IPs) create(ctx context.Context, ip netip.Addr, ref *networkingv1.ParentReference) error {
	if err := a.cfg.Addresses.Create(ctx, a.key(ip), a.newIPAddress(ip, ref), nil); err != nil {
		if storage.IsExists(err) {
			return ipAllocated
		}
		return fmt.Errorf("create IPAddress %s: %w", ip, err)
	}
	return nil
}

var ipAllocated = &allocatedError{"provided IP is already allocated"}

// Allocate takes ip for ref (the Service): ErrMismatchedNetwork if no
// pool holds it, ErrAllocated if taken. A dry run only checks that the
// default range holds ip (*ErrNotInRange if not), taken or not: upstream's
// MetaAllocator answers a dry run with one ServiceCIDR's dry-run
// allocator, which checks nothing else (with several ServiceCIDRs it picks
// one at random; kapi the default).
//
// As upstream's Allocator.AllocateService, an allocation (not a dry run)
// counts in the metrics of the first pool holding ip with scope
// "static": a failed IPAddress write (taken, too) as an error, a
// success as an allocation, with the pool's gauges and the time it
// took; an address in no pool counts nowhere.
func (a *IPs) Allocate(ctx context.Context, ip netip.Addr, ref *networkingv1.ParentReference, dryRun bool) error {
	ip = ip.Unmap()
	if dryRun {
		if !inPrefix(a.cfg.Default, ip) {
			return &ErrNotInRange{Value: ip.String(), Kind: "IP", ValidRange: a.cfg.Default.String()}
		}
		return nil
	}
	pools, err := a.pools(ctx, false)
	if err != nil {
		return err
	}
	p, ok := poolOf(pools, ip)
	if !ok {
		return ErrMismatchedNetwork
	}
	start := time.Now()
	m := a.cfg.Metrics
	if err := a.create(ctx, ip, ref); err != nil {
		m.ipError(p, scopeStatic)
		return err
	}
	m.ipAllocation(p, scopeStatic)
	m.ipRangeUsed(a, p)
	m.ipDuration(p, time.Since(start))
	return nil
}

// Restore takes ip for ref as Allocate does, but counts in no metric:
// it is the repair's write of an address a Service holds without its
// IPAddress (upstream's RepairIPAddress controller writes it through its
// own client, not through the metered allocator).
func (a *IPs) Restore(ctx context.Context, ip netip.Addr, ref *networkingv1.ParentReference) error {
	ip = ip.Unmap()
	pools, err := a.pools(ctx, false)
	if err != nil {
		return err
	}
	if _, ok := poolOf(pools, ip); !ok {
		return ErrMismatchedNetwork
	}
	return a.create(ctx, ip, ref)
}

// usage counts the IPAddresses the allocator manages (its family's,
// managed-by ipallocator.k8s.io) in each of ranges, as upstream's
// Allocator.Used counts them, from one consistent list (from the watch
// cache once it has caught up).
func (a *IPs) usage(ctx context.Context, ranges []netip.Prefix) (map[netip.Prefix]int, error) {
	out := make(map[netip.Prefix]int, len(ranges))
	for _, p := range ranges {
		out[p] = 0
	}
	err := a.eachManaged(ctx, func(ip netip.Addr, _ *networkingv1.IPAddress) {
		for _, p := range ranges {
			if p.Contains(ip) {
				out[p]++
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachManaged calls fn with every IPAddress of the allocator's family that
// it manages (labelled managed-by ipallocator.k8s.io) and its address,
// from one consistent list (from the watch cache once it has caught up).
// Objects whose name is not an address are skipped.
func (a *IPs) eachManaged(ctx context.Context, fn func(netip.Addr, *networkingv1.IPAddress)) error {
	var list networkingv1.IPAddressList
	if err := a.cfg.Addresses.GetList(ctx, a.cfg.AddressPrefix, storage.ListOptions{Recursive: true}, &list); err != nil {
		return fmt.Errorf("list ipaddresses: %w", err)
	}
	for i := range list.Items {
		it := &list.Items[i]
		if it.Labels[networkingv1.LabelManagedBy] != ControllerName || it.Labels[networkingv1.LabelIPAddressFamily] != string(a.family) {
			continue
		}
		if ip, err := netip.ParseAddr(it.Name); err == nil {
			fn(ip, it)
		}
	}
	return nil
}

// AllocateNext takes a free address for ref from the first pool that has
// one: in each pool the upper part of the range first, then the lower
// part (KEP-3070), from a random start; never the default range's first
// address. ErrFull if every pool is full. A dry run returns the default
// range's network address, as upstream's dry-run allocator ("Don't bother
// finding a free value"), which is what a dry-run create shows.
//
// As upstream's Allocator.allocateNextService, an allocation (not a dry
// run) counts with scope "dynamic" in the metrics of the pool it comes
// from (allocation, gauges, the time it took in that pool); a full pool
// counts an error in its own; a failed IPAddress write counts two
// errors (upstream's createIPAddress and its caller each count one), and
// losing a race for an address one, as upstream's mid-air collision: only
// once the scan of the listed addresses has begun, as upstream tries only
// addresses its informer does not show (kapi's first random tries are
// its cheaper way to look).
func (a *IPs) AllocateNext(ctx context.Context, ref *networkingv1.ParentReference, dryRun bool) (netip.Addr, error) {
	if dryRun {
		return a.cfg.Default.Addr(), nil
	}
	pools, err := a.pools(ctx, false)
	if err != nil {
		return netip.Addr{}, err
	}
	m := a.cfg.Metrics
	var taken map[netip.Addr]bool // listed once, when random picks fail
	reserved := a.First()         // the "kubernetes" Service's address
	for _, p := range pools {
		size := rangeSize(p)
		lowSize := min(rangeOffset(p), size)
		first := p.Addr().Next()
		start := time.Now()
		try := func(off uint64) (bool, error) {
			ip := addOffset(first, off)
			if ip == reserved || taken[ip] {
				return false, nil
			}
			err := a.create(ctx, ip, ref)
			if errors.Is(err, ErrAllocated) {
				if taken != nil {
					taken[ip] = true
					m.ipError(p, scopeDynamic)
				}
				return false, nil
			}
			if err != nil {
				m.ipError(p, scopeDynamic)
				m.ipError(p, scopeDynamic)
				return false, err
			}
			if m != nil {
				m.ipAllocation(p, scopeDynamic)
				m.ipRangeUsed(a, p)
				m.ipDuration(p, time.Since(start))
			}
			return true, nil
		}
		for _, sub := range [][2]uint64{{lowSize, size}, {0, lowSize}} {
			lo, hi := sub[0], sub[1]
			if hi <= lo {
				continue
			}
			n := hi - lo
			if taken == nil {
				for range directTries {
					off := lo + rand.Uint64N(n)
					if ok, err := try(off); ok || err != nil {
						return addOffset(first, off), err
					}
				}
				if taken, err = a.takenSet(ctx); err != nil {
					return netip.Addr{}, err
				}
			}
			start := rand.Uint64N(n)
			for j := uint64(0); j < n; j++ {
				off := lo + (start+j)%n
				if ok, err := try(off); ok || err != nil {
					return addOffset(first, off), err
				}
				if err := ctx.Err(); err != nil {
					return netip.Addr{}, err
				}
			}
		}
		m.ipError(p, scopeDynamic) // this pool is full
	}
	return netip.Addr{}, ErrFull
}

// takenSet lists every IPAddress (whoever manages it: an address is
// taken whatever wrote it), from the watch cache if any: a stale answer
// only costs a failed create (storage Create decides).
func (a *IPs) takenSet(ctx context.Context) (map[netip.Addr]bool, error) {
	var list networkingv1.IPAddressList
	if err := a.cfg.Addresses.GetList(ctx, a.cfg.AddressPrefix, storage.ListOptions{Recursive: true, ResourceVersion: "0"}, &list); err != nil {
		return nil, fmt.Errorf("list ipaddresses: %w", err)
	}
	out := make(map[netip.Addr]bool, len(list.Items))
	for i := range list.Items {
		if ip, err := netip.ParseAddr(list.Items[i].Name); err == nil {
			out[ip] = true
		}
	}
	return out, nil
}

// Release frees ip: its IPAddress is deleted (nothing happens if there is
// none). Once it is deleted, the gauges of the first pool holding it (a
// ServiceCIDR being deleted too) are set, as upstream's Allocator.release.
func (a *IPs) Release(ctx context.Context, ip netip.Addr) error {
	if !ip.IsValid() {
		return nil
	}
	ip = ip.Unmap()
	err := a.cfg.Addresses.Delete(ctx, a.key(ip), &networkingv1.IPAddress{}, nil, nil, nil)
	if storage.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("release %s: %w", ip, err)
	}
	if a.cfg.Metrics != nil {
		if pools, err := a.pools(ctx, true); err == nil {
			if p, ok := poolOf(pools, ip); ok {
				a.cfg.Metrics.ipRangeUsed(a, p)
			}
		}
	}
	return nil
}

// Has reports whether ip has an IPAddress.
func (a *IPs) Has(ctx context.Context, ip netip.Addr) (bool, error) {
	err := a.cfg.Addresses.Get(ctx, a.key(ip.Unmap()), storage.GetOptions{}, &networkingv1.IPAddress{})
	switch {
	case err == nil:
		return true, nil
	case storage.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("read IPAddress %s: %w", ip, err)
	}
}

// Allocated returns the addresses of the allocator's family whose
// IPAddress it manages (labelled managed-by ipallocator.k8s.io), Owner
// being the parentRef as "services/<namespace>/<name>".
func (a *IPs) Allocated(ctx context.Context) (map[netip.Addr]Allocation, error) {
	out := map[netip.Addr]Allocation{}
	err := a.eachManaged(ctx, func(ip netip.Addr, it *networkingv1.IPAddress) {
		out[ip] = Allocation{Owner: refString(it.Spec.ParentRef), Created: it.CreationTimestamp.Time, ResourceVersion: it.ResourceVersion}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReleaseIfUnchanged frees ip if its IPAddress is still the allocation al
// (as read by Allocated): an address released and taken again since is
// kept.
func (a *IPs) ReleaseIfUnchanged(ctx context.Context, ip netip.Addr, al Allocation) error {
	rv := al.ResourceVersion
	err := a.cfg.Addresses.Delete(ctx, a.key(ip.Unmap()), &networkingv1.IPAddress{}, &storage.Preconditions{ResourceVersion: &rv}, nil, nil)
	if err != nil && !storage.IsNotFound(err) && !storage.IsConflict(err) {
		return fmt.Errorf("release %s: %w", ip, err)
	}
	return nil
}
