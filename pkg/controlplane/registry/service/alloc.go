package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// Allocators are the ranges services take ClusterIPs and NodePorts from.
type Allocators struct {
	IPs   *allocator.IPs
	Ports *allocator.Ports
}

// family is the IP family of the cluster's service range.
func (a *Allocators) family() corev1.IPFamily { return a.IPs.Family() }

// owner names a service in its NodePort allocations.
func owner(svc *corev1.Service) string {
	return "services/" + svc.Namespace + "/" + svc.Name
}

// ipOwner is the parentRef of a service's IPAddresses.
func ipOwner(svc *corev1.Service) *networkingv1.ParentReference {
	return allocator.ServiceRef(svc.Namespace, svc.Name)
}

var serviceKind = corev1.SchemeGroupVersion.WithKind("Service").GroupKind()

func invalid(svc *corev1.Service, errs ...*field.Error) error {
	return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList(errs))
}

// txn records what one write allocated (released if the write fails) and
// what it makes unused (released once the write succeeded).
type txn struct {
	a            *Allocators
	dryRun       bool
	ips          []netip.Addr
	ports        []int
	releaseIPs   []netip.Addr
	releasePorts []int
	logger       *slog.Logger
	// dryPorts are the NodePorts a dry run has shown so far (see
	// dryPort and dryNextPort).
	dryPorts []int
}

// dryPort is a dry run's allocation of a requested NodePort, as
// upstream's PortAllocationOperation: taken if allocated or already shown
// by this write, whatever the range.
func (t *txn) dryPort(ctx context.Context, port int) error {
	taken, err := t.a.Ports.Has(ctx, port)
	if err != nil {
		return err
	}
	if taken || slices.Contains(t.dryPorts, port) {
		return errPortAllocated{}
	}
	t.dryPorts = append(t.dryPorts, port)
	return nil
}

// errPortAllocated is a dry run's taken NodePort: the allocator's
// ErrAllocated with its message.
type errPortAllocated struct{}

func (errPortAllocated) Error() string        { return "provided port is already allocated" }
func (errPortAllocated) Is(target error) bool { return target == allocator.ErrAllocated }

// dryNextPort is a dry run's NodePort for a port without one: as
// upstream's PortAllocationOperation ("a sensible guess for a dummy port
// number"), one above the highest shown by this write, 32769 for the
// first, in the range or not.
func (t *txn) dryNextPort() int {
	last := 32768
	if len(t.dryPorts) > 0 {
		last = slices.Max(t.dryPorts)
	}
	t.dryPorts = append(t.dryPorts, last+1)
	return last + 1
}

// revert releases what the write allocated.
func (t *txn) revert(ctx context.Context) {
	if t.dryRun {
		return
	}
	ctx = context.WithoutCancel(ctx)
	t.release(ctx, t.ips, t.ports, "revert")
	t.ips, t.ports = nil, nil
}

// commit releases what the write made unused.
func (t *txn) commit(ctx context.Context) {
	if t.dryRun {
		return
	}
	t.release(context.WithoutCancel(ctx), t.releaseIPs, t.releasePorts, "release")
}

func (t *txn) release(ctx context.Context, ips []netip.Addr, ports []int, why string) {
	for _, ip := range ips {
		if err := t.a.IPs.Release(ctx, ip); err != nil {
			t.logger.Error("release cluster IP", "ip", ip, "reason", why, "err", err)
		}
	}
	for _, p := range ports {
		if err := t.a.Ports.Release(ctx, p); err != nil {
			t.logger.Error("release node port", "port", p, "reason", why, "err", err)
		}
	}
}

// initIPFamilyFields defaults ipFamilyPolicy and ipFamilies for the
// cluster's single family and rejects what the cluster cannot serve, as
// kube's allocator does before allocating. old is nil on create.
func (a *Allocators) initIPFamilyFields(svc, old *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	spec := &svc.Spec
	headlessSelectorless := spec.ClusterIP == corev1.ClusterIPNone && len(spec.Selector) == 0
	if spec.IPFamilyPolicy == nil {
		var p corev1.IPFamilyPolicy
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			p = *old.Spec.IPFamilyPolicy
		case headlessSelectorless:
			p = corev1.IPFamilyPolicyRequireDualStack
		default:
			p = corev1.IPFamilyPolicySingleStack
		}
		spec.IPFamilyPolicy = &p
	}
	if errs := validation.ValidateServiceClusterIPsRelatedFields(svc); len(errs) > 0 {
		return invalid(svc, errs...)
	}
	var errs []*field.Error
	policyPath := field.NewPath("spec", "ipFamilyPolicy")
	if *spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack {
		if len(spec.ClusterIPs) == 2 {
			errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(spec.IPFamilies) == 2 {
			errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	for i, ip := range spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		fam := familyOf(ip)
		if i >= len(spec.IPFamilies) {
			if fam != a.family() {
				errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), spec.ClusterIPs,
					fmt.Sprintf("%s is not configured on this cluster", fam)))
			} else {
				spec.IPFamilies = append(spec.IPFamilies, fam)
			}
		}
	}
	if len(errs) > 0 {
		return invalid(svc, errs...)
	}
	if headlessSelectorless {
		if len(spec.IPFamilies) == 0 {
			spec.IPFamilies = []corev1.IPFamily{a.family()}
		}
		if len(spec.IPFamilies) < 2 && *spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
			other := corev1.IPv6Protocol
			if spec.IPFamilies[0] == corev1.IPv6Protocol {
				other = corev1.IPv4Protocol
			}
			spec.IPFamilies = append(spec.IPFamilies, other)
		}
		return nil
	}
	if *spec.IPFamilyPolicy == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "this cluster is not configured for dual-stack services"))
	}
	for i, f := range spec.IPFamilies {
		if f != a.family() {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return invalid(svc, errs...)
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{a.family()}
	}
	return nil
}

func familyOf(ip string) corev1.IPFamily {
	if a, err := netip.ParseAddr(ip); err == nil && a.Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// allocateCreate defaults the IP family fields and allocates the cluster
// IP, NodePorts and health check NodePort a new service needs.
func (a *Allocators) allocateCreate(ctx context.Context, t *txn, svc *corev1.Service) error {
	if err := a.initIPFamilyFields(svc, nil); err != nil {
		return err
	}
	if err := a.allocClusterIP(ctx, t, svc); err != nil {
		return err
	}
	if needsNodePort(svc) {
		if err := a.initNodePorts(ctx, t, svc); err != nil {
			return err
		}
	}
	if needsHCNodePort(svc) {
		return a.allocHealthCheckNodePort(ctx, t, svc)
	}
	return nil
}

// allocClusterIP takes the requested cluster IP, or a free one.
func (a *Allocators) allocClusterIP(ctx context.Context, t *txn, svc *corev1.Service) error {
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if len(spec.ClusterIPs) > 0 && spec.ClusterIPs[0] == corev1.ClusterIPNone {
		return nil
	}
	if len(spec.ClusterIPs) == 0 || spec.ClusterIPs[0] == "" {
		ip, err := a.IPs.AllocateNext(ctx, ipOwner(svc), t.dryRun)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %w", err))
		}
		if !t.dryRun {
			t.ips = append(t.ips, ip)
		}
		if len(spec.ClusterIPs) == 0 {
			spec.ClusterIPs = []string{""}
		}
		spec.ClusterIPs[0] = ip.String()
		spec.ClusterIP = ip.String()
		return nil
	}
	requested := spec.ClusterIPs[0]
	ip, err := netip.ParseAddr(requested)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to parse service IP %q", requested))
	}
	if err := a.IPs.Allocate(ctx, ip, ipOwner(svc), t.dryRun); err != nil {
		// Upstream answers every allocation error of a requested IP
		// (taken, in no ServiceCIDR, or a failed IPAddress write) with
		// this 422 (pkg/registry/core/service/storage/alloc.go, allocIPs).
		return invalid(svc, field.Invalid(field.NewPath("spec", "clusterIPs"), spec.ClusterIPs,
			fmt.Sprintf("failed to allocate IP %v: %v", requested, err)))
	}
	if !t.dryRun {
		t.ips = append(t.ips, ip)
	}
	spec.ClusterIP = requested
	return nil
}

// allocPort takes a requested NodePort; a taken or out-of-range port is
// 422 at fldPath.
func (a *Allocators) allocPort(ctx context.Context, t *txn, svc *corev1.Service, port int, fldPath *field.Path) error {
	if t.dryRun {
		if err := t.dryPort(ctx, port); err != nil {
			if errors.Is(err, allocator.ErrAllocated) {
				return invalid(svc, field.Invalid(fldPath, port, err.Error()))
			}
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate nodePort %d: %w", port, err))
		}
		return nil
	}
	if err := a.Ports.Allocate(ctx, port, owner(svc), false); err != nil {
		var nir *allocator.ErrNotInRange
		if errors.Is(err, allocator.ErrAllocated) || errors.As(err, &nir) {
			return invalid(svc, field.Invalid(fldPath, port, err.Error()))
		}
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate nodePort %d: %w", port, err))
	}
	t.ports = append(t.ports, port)
	return nil
}

func (a *Allocators) nextPort(ctx context.Context, t *txn, svc *corev1.Service) (int, error) {
	if t.dryRun {
		return t.dryNextPort(), nil
	}
	p, err := a.Ports.AllocateNext(ctx, owner(svc), false)
	if err != nil {
		return 0, apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
	}
	t.ports = append(t.ports, p)
	return p, nil
}

// initNodePorts gives each port of a new NodePort or LoadBalancer service
// its NodePort: ports with the same number (e.g. 53/TCP and 53/UDP) share
// one.
func (a *Allocators) initNodePorts(ctx context.Context, t *txn, svc *corev1.Service) error {
	byPort := map[int32]int32{}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
		if sp.NodePort == 0 && !shouldAllocateNodePorts(svc) {
			continue
		}
		allocated := byPort[sp.Port]
		switch {
		case allocated == 0:
			np := findRequestedNodePort(sp.Port, svc.Spec.Ports)
			if np != 0 {
				if err := a.allocPort(ctx, t, svc, int(np), path); err != nil {
					return err
				}
			} else {
				p, err := a.nextPort(ctx, t, svc)
				if err != nil {
					return err
				}
				np = int32(p)
			}
			sp.NodePort = np
			byPort[sp.Port] = np
		case sp.NodePort == 0:
			sp.NodePort = allocated
		case sp.NodePort != allocated:
			if err := a.allocPort(ctx, t, svc, int(sp.NodePort), path); err != nil {
				return err
			}
		}
	}
	return nil
}

func findRequestedNodePort(port int32, ports []corev1.ServicePort) int32 {
	for _, p := range ports {
		if p.Port == port && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}

func (a *Allocators) allocHealthCheckNodePort(ctx context.Context, t *txn, svc *corev1.Service) error {
	if hc := svc.Spec.HealthCheckNodePort; hc != 0 {
		if t.dryRun {
			if err := t.dryPort(ctx, int(hc)); err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %w", hc, err))
			}
			return nil
		}
		if err := a.Ports.Allocate(ctx, int(hc), owner(svc), false); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %w", hc, err))
		}
		t.ports = append(t.ports, int(hc))
		return nil
	}
	if t.dryRun {
		svc.Spec.HealthCheckNodePort = int32(t.dryNextPort())
		return nil
	}
	p, err := a.Ports.AllocateNext(ctx, owner(svc), false)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a HealthCheck NodePort %v: %w", 0, err))
	}
	t.ports = append(t.ports, p)
	svc.Spec.HealthCheckNodePort = int32(p)
	return nil
}

// allocateUpdate allocates what an update newly needs and records what it
// makes unused (released on commit).
func (a *Allocators) allocateUpdate(ctx context.Context, t *txn, svc, old *corev1.Service) error {
	if err := a.initIPFamilyFields(svc, old); err != nil {
		return err
	}
	// Cluster IPs: allocated when leaving ExternalName, released when
	// becoming ExternalName; immutable otherwise (validation).
	switch {
	case old.Spec.Type == corev1.ServiceTypeExternalName && svc.Spec.Type != corev1.ServiceTypeExternalName:
		if err := a.allocClusterIP(ctx, t, svc); err != nil {
			return err
		}
	case old.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.Type == corev1.ServiceTypeExternalName:
		t.releaseIPs = append(t.releaseIPs, clusterIPs(old)...)
	}
	// NodePorts.
	if needsNodePort(old) && !needsNodePort(svc) {
		t.releasePorts = append(t.releasePorts, nodePorts(old)...)
	}
	if needsNodePort(svc) {
		if err := a.updateNodePorts(ctx, t, svc, old); err != nil {
			return err
		}
	}
	switch {
	case !needsHCNodePort(old) && needsHCNodePort(svc):
		if err := a.allocHealthCheckNodePort(ctx, t, svc); err != nil {
			return err
		}
	case needsHCNodePort(old) && !needsHCNodePort(svc):
		if old.Spec.HealthCheckNodePort > 0 {
			t.releasePorts = append(t.releasePorts, int(old.Spec.HealthCheckNodePort))
		}
	}
	return nil
}

func (a *Allocators) updateNodePorts(ctx context.Context, t *txn, svc, old *corev1.Service) error {
	oldPorts := map[int]bool{}
	for _, p := range nodePorts(old) {
		oldPorts[p] = true
	}
	taken := map[int]bool{}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if sp.NodePort == 0 && !shouldAllocateNodePorts(svc) {
			continue
		}
		if sp.NodePort != 0 {
			np := int(sp.NodePort)
			if !oldPorts[np] && !taken[np] {
				if err := a.allocPort(ctx, t, svc, np, field.NewPath("spec", "ports").Index(i).Child("nodePort")); err != nil {
					return err
				}
				taken[np] = true
			}
			continue
		}
		p, err := a.nextPort(ctx, t, svc)
		if err != nil {
			return err
		}
		sp.NodePort = int32(p)
	}
	kept := map[int]bool{}
	for _, p := range nodePorts(svc) {
		kept[p] = true
	}
	for _, p := range nodePorts(old) {
		if !kept[p] {
			t.releasePorts = append(t.releasePorts, p)
		}
	}
	return nil
}

// clusterIPs returns the allocated cluster IPs of svc.
func clusterIPs(svc *corev1.Service) []netip.Addr {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var out []netip.Addr
	for _, s := range svc.Spec.ClusterIPs {
		if ip, err := netip.ParseAddr(s); err == nil {
			out = append(out, ip)
		}
	}
	if len(out) == 0 {
		if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil {
			out = append(out, ip)
		}
	}
	return out
}

// nodePorts returns the distinct NodePorts of svc's ports.
func nodePorts(svc *corev1.Service) []int {
	seen := map[int]bool{}
	var out []int
	for _, p := range svc.Spec.Ports {
		if np := int(p.NodePort); np != 0 && !seen[np] {
			seen[np] = true
			out = append(out, np)
		}
	}
	return out
}

// allocatedResources returns everything svc holds: cluster IPs, NodePorts
// and its health check NodePort.
func allocatedResources(svc *corev1.Service) ([]netip.Addr, []int) {
	ports := nodePorts(svc)
	if needsHCNodePort(svc) && svc.Spec.HealthCheckNodePort > 0 {
		ports = append(ports, int(svc.Spec.HealthCheckNodePort))
	}
	return clusterIPs(svc), ports
}
