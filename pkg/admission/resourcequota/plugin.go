package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/quota"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "ResourceQuota"

// Quotas reads and charges the quotas of a namespace.
type Quotas interface {
	// List returns the quotas of namespace.
	List(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error)
	// UpdateStatus writes q's status if q's resourceVersion is still the
	// stored one (a conflict error otherwise).
	UpdateStatus(ctx context.Context, q *corev1.ResourceQuota) error
}

// CachedQuotas is implemented by Quotas that can also answer from the
// server's watch cache, as upstream's plugin reads its informer: the first
// check of a request uses it; a check redone after a conflicting charge
// reads storage.
type CachedQuotas interface {
	ListCached(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error)
}

// Plugin is the ResourceQuota admission plugin.
type Plugin struct {
	quotas Quotas
	// Now is the clock deciding whether a deleted pod still counts; nil
	// means time.Now.
	Now func() time.Time
	// Retries bounds the checks redone after a conflicting charge.
	Retries int
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin charging quotas.
func New(quotas Quotas) *Plugin { return &Plugin{quotas: quotas, Retries: 10} }

// Name implements admission.Validator.
func (p *Plugin) Name() string { return PluginName }

// Handles creates and updates.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

func (p *Plugin) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// ignored are resources upstream's plugin never charges (its default
// ignored resources, plus the cluster's reviews that store nothing).
var ignored = map[schema.GroupResource]bool{
	{Resource: "events"}:                         true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// ReadsObjects implements admission.ObjectReader: Validate's own early
// returns (a's objects are not known here).
func (p *Plugin) ReadsObjects(a admission.Attributes) bool {
	if a.Namespace == "" || a.Subresource != "" || ignored[a.Resource.GroupResource()] {
		return false
	}
	return a.Operation != admission.Update || quota.For(a.Resource.GroupResource()).ChargesUpdates()
}

// Validate charges a's usage or refuses it.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	if a.Namespace == "" || a.Subresource != "" || a.Object == nil || ignored[a.Resource.GroupResource()] {
		return nil
	}
	gr := a.Resource.GroupResource()
	ev := quota.For(gr)
	if a.Operation == admission.Update && !ev.ChargesUpdates() {
		return nil
	}
	now := p.now()
	delta, err := ev.Usage(a.Object, now)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if a.Operation == admission.Update && a.OldObject != nil {
		prev, err := ev.Usage(a.OldObject, now)
		if err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		delta = quota.SubtractNonNegative(delta, prev)
	}
	for attempt := 0; ; attempt++ {
		charged, err := p.check(ctx, a, ev, delta, attempt == 0)
		if err != nil {
			return err
		}
		if len(charged) == 0 || a.DryRun {
			return nil
		}
		err = p.charge(ctx, charged)
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt >= p.Retries {
			return err
		}
	}
}

// check returns the quotas a's delta charges, with their new usage, or
// the error refusing a.
func (p *Plugin) check(ctx context.Context, a admission.Attributes, ev quota.Evaluator, delta corev1.ResourceList, cacheOK bool) ([]corev1.ResourceQuota, error) {
	var quotas []corev1.ResourceQuota
	var err error
	if c, ok := p.quotas.(CachedQuotas); ok && cacheOK {
		quotas, err = c.ListCached(ctx, a.Namespace)
	} else {
		quotas, err = p.quotas.List(ctx, a.Namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("listing the resource quotas of namespace %s: %w", a.Namespace, err)
	}
	if len(quotas) == 0 {
		return nil, nil
	}
	slices.SortFunc(quotas, func(x, y corev1.ResourceQuota) int { return strings.Compare(x.Name, y.Name) })
	gr := a.Resource.GroupResource()
	var matched []corev1.ResourceQuota
	for i := range quotas {
		q := &quotas[i]
		ok, err := quota.Matches(q, a.Object, ev)
		if err != nil {
			return nil, apierrors.NewForbidden(gr, a.Name, fmt.Errorf("failed quota: %s: %w", q.Name, err))
		}
		if !ok {
			continue
		}
		restricted := ev.MatchingResources(quota.Names(q.Status.Hard))
		if err := ev.Constraints(restricted, a.Object); err != nil {
			return nil, apierrors.NewForbidden(gr, a.Name, fmt.Errorf("failed quota: %s: %w", q.Name, err))
		}
		var unknown []corev1.ResourceName
		for _, n := range restricted {
			if _, ok := q.Status.Used[n]; !ok {
				unknown = append(unknown, n)
			}
		}
		if len(unknown) > 0 {
			return nil, apierrors.NewForbidden(gr, a.Name, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, quota.PrettyPrintNames(unknown)))
		}
		matched = append(matched, *q)
	}
	if len(matched) == 0 || quota.IsZero(delta) {
		return nil, nil
	}
	var charged []corev1.ResourceQuota
	for _, q := range matched {
		requested := quota.Mask(delta, quota.Names(q.Status.Hard))
		if quota.IsZero(requested) {
			continue
		}
		used := quota.Add(q.Status.Used, requested)
		if ok, exceeded := quota.LessThanOrEqual(quota.Mask(used, quota.Names(requested)), q.Status.Hard); !ok {
			return nil, apierrors.NewForbidden(gr, a.Name, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				q.Name,
				quota.PrettyPrint(quota.Mask(requested, exceeded)),
				quota.PrettyPrint(quota.Mask(q.Status.Used, exceeded)),
				quota.PrettyPrint(quota.Mask(q.Status.Hard, exceeded))))
		}
		q.Status.Used = used
		charged = append(charged, q)
	}
	return charged, nil
}

// charge writes the new usage of each quota, each conditional on the
// resourceVersion read.
func (p *Plugin) charge(ctx context.Context, quotas []corev1.ResourceQuota) error {
	var errs []error
	for i := range quotas {
		if err := p.quotas.UpdateStatus(ctx, &quotas[i]); err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			errs = append(errs, fmt.Errorf("charging resource quota %s: %w", quotas[i].Name, err))
		}
	}
	return errors.Join(errs...)
}
