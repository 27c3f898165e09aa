package service

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"

	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// RepairResult counts what a repair changed.
type RepairResult struct {
	// Released are allocations no service holds (leaked by a crash between
	// allocation and write, or by services deleted through the generic
	// store, e.g. by the namespace controller).
	Released int
	// Restored are values services hold that were not allocated (e.g.
	// after a restore of the services without the allocations).
	Restored int
}

// Repair reconciles the allocations with the stored services, as kube's
// ClusterIP and NodePort repair controllers: an allocation older than
// minAge that no service holds is released (younger ones may belong to a
// write in flight), and a value a service holds is allocated if it is not.
// Neither counts in the allocators' metrics (upstream's repair controllers
// write around them); the NodePort side counts what it finds in
// apiserver_nodeport_repair_port_errors_total and its failures in
// apiserver_nodeport_repair_reconcile_errors_total, as upstream's
// (pkg/registry/core/service/portallocator/controller/repair.go).
func (r *REST) Repair(ctx context.Context, minAge time.Duration) (RepairResult, error) {
	var res RepairResult
	portsFailed := func(err error) (RepairResult, error) {
		r.alloc.Ports.RepairFailed()
		return res, err
	}
	ips, err := r.alloc.IPs.Allocated(ctx)
	if err != nil {
		return res, err
	}
	ports, err := r.alloc.Ports.Allocated(ctx)
	if err != nil {
		return portsFailed(err)
	}
	obj, err := r.store.List(request.WithNamespace(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return portsFailed(fmt.Errorf("list services: %w", err))
	}
	list, ok := obj.(*corev1.ServiceList)
	if !ok {
		return portsFailed(fmt.Errorf("list services: got %T", obj))
	}
	heldIPs := map[netip.Addr]*corev1.Service{}
	heldPorts := map[int]*corev1.Service{}
	for i := range list.Items {
		svc := &list.Items[i]
		for _, ip := range clusterIPs(svc) {
			heldIPs[ip] = svc
		}
		for _, p := range repairNodePorts(svc) {
			switch {
			case !r.alloc.Ports.Range().Contains(p):
				r.alloc.Ports.RepairFound("outOfRange")
			case heldPorts[p] != nil:
				r.alloc.Ports.RepairFound("duplicate")
			default:
				heldPorts[p] = svc
			}
		}
	}
	now := time.Now()
	for ip, al := range ips {
		if heldIPs[ip] == nil && now.Sub(al.Created) >= minAge {
			if err := r.alloc.IPs.ReleaseIfUnchanged(ctx, ip, al); err != nil {
				return res, err
			}
			r.logger.Info("released leaked cluster IP", "ip", ip, "owner", al.Owner)
			res.Released++
		}
	}
	for p, al := range ports {
		if heldPorts[p] == nil && now.Sub(al.Created) >= minAge {
			if err := r.alloc.Ports.ReleaseIfUnchanged(ctx, p, al); err != nil {
				return portsFailed(err)
			}
			r.logger.Info("released leaked node port", "port", p, "owner", al.Owner)
			r.alloc.Ports.RepairFound("leak")
			res.Released++
		}
	}
	for ip, svc := range heldIPs {
		if _, ok := ips[ip]; ok {
			continue
		}
		restored, err := r.restore(r.alloc.IPs.Restore(ctx, ip, ipOwner(svc)))
		if errors.Is(err, allocator.ErrMismatchedNetwork) {
			// In no ServiceCIDR (upstream's repair reports it with an
			// event and leaves the Service as it is).
			r.logger.Warn("cluster IP is in no ServiceCIDR", "ip", ip, "service", owner(svc))
			continue
		}
		if err != nil {
			return res, err
		}
		if restored {
			res.Restored++
		}
	}
	for p, svc := range heldPorts {
		if _, ok := ports[p]; ok {
			continue
		}
		if restored, err := r.restore(r.alloc.Ports.Restore(ctx, p, owner(svc))); err != nil {
			return portsFailed(err)
		} else if restored {
			r.alloc.Ports.RepairFound("repair")
			res.Restored++
		}
	}
	return res, nil
}

// repairNodePorts are the NodePorts of svc as upstream's repair collects
// them (collectServiceNodePorts): each port's NodePort, again for a
// NodePort repeated with the same protocol (a duplicate), once for one
// repeated with another protocol; and the health check NodePort unless a
// port already has it with another protocol than TCP only.
func repairNodePorts(svc *corev1.Service) []int {
	var out []int
	protocols := map[int]map[corev1.Protocol]bool{}
	for _, p := range svc.Spec.Ports {
		np := int(p.NodePort)
		if np == 0 {
			continue
		}
		seen := protocols[np]
		switch {
		case seen == nil:
			protocols[np] = map[corev1.Protocol]bool{p.Protocol: true}
			out = append(out, np)
		case seen[p.Protocol]:
			out = append(out, np)
		default:
			seen[p.Protocol] = true
		}
	}
	if hc := int(svc.Spec.HealthCheckNodePort); hc != 0 {
		if seen := protocols[hc]; seen == nil || seen[corev1.ProtocolTCP] {
			out = append(out, hc)
		}
	}
	return out
}

// restore interprets the result of re-allocating a held value: taken
// meanwhile is fine.
func (r *REST) restore(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case isAllocated(err):
		return false, nil
	default:
		return false, err
	}
}

func isAllocated(err error) bool {
	return err != nil && errors.Is(err, allocator.ErrAllocated)
}
