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
func (r *REST) Repair(ctx context.Context, minAge time.Duration) (RepairResult, error) {
	var res RepairResult
	ips, err := r.alloc.IPs.Allocated(ctx)
	if err != nil {
		return res, err
	}
	ports, err := r.alloc.Ports.Allocated(ctx)
	if err != nil {
		return res, err
	}
	obj, err := r.store.List(request.WithNamespace(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return res, fmt.Errorf("list services: %w", err)
	}
	list, ok := obj.(*corev1.ServiceList)
	if !ok {
		return res, fmt.Errorf("list services: got %T", obj)
	}
	heldIPs := map[netip.Addr]*corev1.Service{}
	heldPorts := map[int]*corev1.Service{}
	for i := range list.Items {
		svc := &list.Items[i]
		svcIPs, svcPorts := allocatedResources(svc)
		for _, ip := range svcIPs {
			heldIPs[ip] = svc
		}
		for _, p := range svcPorts {
			heldPorts[p] = svc
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
				return res, err
			}
			r.logger.Info("released leaked node port", "port", p, "owner", al.Owner)
			res.Released++
		}
	}
	for ip, svc := range heldIPs {
		if _, ok := ips[ip]; ok {
			continue
		}
		restored, err := r.restore(r.alloc.IPs.Allocate(ctx, ip, ipOwner(svc), false))
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
		if _, ok := ports[p]; ok || !r.alloc.Ports.Range().Contains(p) {
			continue
		}
		if restored, err := r.restore(r.alloc.Ports.Allocate(ctx, p, owner(svc), false)); err != nil {
			return res, err
		} else if restored {
			res.Restored++
		}
	}
	return res, nil
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
