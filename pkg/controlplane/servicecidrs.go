package controlplane

import (
	"context"
	"log/slog"
	"slices"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/allocator"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// serviceCIDRDeletionGrace is how long a deleted ServiceCIDR keeps its
// finalizer once nothing blocks it, so that allocations in flight that
// still saw it usable land first (upstream's deletionGracePeriod).
const serviceCIDRDeletionGrace = 10 * time.Second

// serviceCIDRSyncInterval is how often the ServiceCIDR controller runs.
const serviceCIDRSyncInterval = time.Second

// serviceCIDRs is kube-controller-manager's servicecidrs controller
// (pkg/controller/servicecidrs), run in-process since kapi has no
// controller manager: every ServiceCIDR gets the
// networking.k8s.io/service-cidr-finalizer and a Ready=True condition; a
// deleted one loses its finalizer once no IPAddress would be left outside
// every ServiceCIDR (and the grace period passed), and meanwhile shows
// Ready=False, reason Terminating.
type serviceCIDRs struct {
	store  *generic.Store
	status *generic.StatusREST
	ips    *generic.Store
	grace  time.Duration
	logger *slog.Logger
}

// sync runs the controller once over every ServiceCIDR.
func (c *serviceCIDRs) sync(ctx context.Context) {
	sctx := systemContext(ctx, "")
	obj, err := c.store.List(sctx, &metainternalversion.ListOptions{})
	if err != nil {
		c.warn(ctx, "list servicecidrs", err)
		return
	}
	all := obj.(*networkingv1.ServiceCIDRList).Items
	var ips []networkingv1.IPAddress
	listedIPs := false
	for i := range all {
		sc := &all[i]
		has := slices.Contains(sc.Finalizers, allocator.ServiceCIDRFinalizer)
		if sc.DeletionTimestamp == nil {
			if !has {
				c.update(ctx, sc.Name, func(sc *networkingv1.ServiceCIDR) bool {
					if sc.DeletionTimestamp != nil || slices.Contains(sc.Finalizers, allocator.ServiceCIDRFinalizer) {
						return false
					}
					sc.Finalizers = append(sc.Finalizers, allocator.ServiceCIDRFinalizer)
					return true
				})
			}
			if !apimeta.IsStatusConditionTrue(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady) {
				c.setReady(ctx, sc.Name, metav1.ConditionTrue, "", allocator.ServiceCIDRReadyMessage)
			}
			continue
		}
		if !has {
			continue
		}
		if !listedIPs {
			l, err := c.ips.List(sctx, &metainternalversion.ListOptions{})
			if err != nil {
				c.warn(ctx, "list ipaddresses", err)
				return
			}
			ips, listedIPs = l.(*networkingv1.IPAddressList).Items, true
		}
		if !allocator.CanDeleteServiceCIDR(sc, all, ips) {
			cond := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != networkingv1.ServiceCIDRReasonTerminating {
				c.setReady(ctx, sc.Name, metav1.ConditionFalse, networkingv1.ServiceCIDRReasonTerminating, allocator.ServiceCIDRTerminatingMessage)
			}
			continue
		}
		if time.Since(sc.DeletionTimestamp.Time) < c.grace {
			continue
		}
		c.update(ctx, sc.Name, func(sc *networkingv1.ServiceCIDR) bool {
			n := len(sc.Finalizers)
			sc.Finalizers = slices.DeleteFunc(sc.Finalizers, func(f string) bool { return f == allocator.ServiceCIDRFinalizer })
			return len(sc.Finalizers) != n
		})
	}
}

func (c *serviceCIDRs) warn(ctx context.Context, what string, err error) {
	if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		c.logger.Warn("ServiceCIDR controller: "+what+" failed", "err", err)
	}
}

// update changes ServiceCIDR name with f (nothing is written when f
// reports no change); removing the last finalizer of a deleted one
// deletes it.
func (c *serviceCIDRs) update(ctx context.Context, name string, f func(*networkingv1.ServiceCIDR) bool) {
	_, _, err := c.store.Update(systemContext(ctx, ""), name, cidrUpdate(f), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	c.warn(ctx, "update servicecidr "+name, err)
}

// setReady sets the Ready condition of ServiceCIDR name through its
// status.
func (c *serviceCIDRs) setReady(ctx context.Context, name string, status metav1.ConditionStatus, reason, message string) {
	_, _, err := c.status.Update(systemContext(ctx, ""), name, cidrUpdate(func(sc *networkingv1.ServiceCIDR) bool {
		return apimeta.SetStatusCondition(&sc.Status.Conditions, metav1.Condition{
			Type: networkingv1.ServiceCIDRConditionReady, Status: status, Reason: reason, Message: message,
		})
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	c.warn(ctx, "update servicecidr "+name+" status", err)
}

// cidrUpdate is a rest.UpdatedObjectInfo applying a change to the stored
// ServiceCIDR (a no-op change answers the stored object: nothing written).
type cidrUpdate func(*networkingv1.ServiceCIDR) bool

func (cidrUpdate) Preconditions() *metav1.Preconditions { return nil }

func (f cidrUpdate) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	sc, ok := old.(*networkingv1.ServiceCIDR)
	if !ok {
		return nil, apierrors.NewNotFound(networkingv1.Resource("servicecidrs"), "")
	}
	sc = sc.DeepCopy()
	f(sc)
	return sc, nil
}
