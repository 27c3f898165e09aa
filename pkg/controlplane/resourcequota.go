package controlplane

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var resourceQuotasResource = corev1.SchemeGroupVersion.WithResource("resourcequotas")

// quotaStore gives the ResourceQuota admission plugin the quotas of a
// namespace and charges them through resourcequotas/status, as the API
// server itself (system:apiserver).
type quotaStore struct {
	quotas *generic.Store
	status *generic.StatusREST

	// live is upstream's live-lookup cache: when the watch cache has no
	// quota in a namespace, storage is listed, at most once per
	// liveLookupTTL per namespace, and its answer kept that long (a quota
	// made a moment ago may not be in the cache yet).
	liveMu sync.Mutex
	live   map[string]liveQuotas
	group  singleflight.Group
	now    func() time.Time // nil: time.Now
}

// liveQuotas is one namespace's quotas as storage listed them, kept until.
type liveQuotas struct {
	items []corev1.ResourceQuota
	until time.Time
}

// liveLookupTTL is how long a live list of a namespace's quotas is kept
// (upstream's quota accessor keeps it 30 s).
const liveLookupTTL = 30 * time.Second

// quotaStoreOf returns the quota store of b's resourcequotas line.
func quotaStoreOf(b *storageBuilder) (*quotaStore, error) {
	quotas, err := storageAs[*generic.Store](b, resourceQuotasResource)
	if err != nil {
		return nil, err
	}
	status, err := subresourceAs[*generic.StatusREST](b, resourceQuotasResource, "status")
	if err != nil {
		return nil, err
	}
	return &quotaStore{quotas: quotas, status: status}, nil
}

func quotaContext(ctx context.Context, ns, verb, name, sub string) context.Context {
	return request.WithRequestInfo(systemContext(ctx, ns), &request.RequestInfo{
		IsResourceRequest: true, Verb: verb, APIPrefix: "api", APIVersion: "v1",
		Namespace: ns, Resource: "resourcequotas", Subresource: sub, Name: name,
	})
}

// List implements resourcequota.Quotas.
func (s *quotaStore) List(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error) {
	obj, err := s.quotas.List(quotaContext(ctx, namespace, "list", "", ""), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*corev1.ResourceQuotaList)
	if !ok {
		return nil, fmt.Errorf("resource quotas: listed a %T", obj)
	}
	return list.Items, nil
}

// ListCached implements resourcequota.CachedQuotas, as upstream's quota
// accessor reads its informer: the quotas the watch cache holds
// (resourceVersion "0", no storage round trip); when it holds none, the
// namespace's live list, made at most once per liveLookupTTL.
func (s *quotaStore) ListCached(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error) {
	obj, err := s.quotas.List(quotaContext(ctx, namespace, "list", "", ""), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*corev1.ResourceQuotaList)
	if !ok {
		return nil, fmt.Errorf("resource quotas: listed a %T", obj)
	}
	if len(list.Items) > 0 {
		return list.Items, nil
	}
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	s.liveMu.Lock()
	e, ok := s.live[namespace]
	s.liveMu.Unlock()
	if ok && now().Before(e.until) {
		return e.items, nil
	}
	v, err, _ := s.group.Do(namespace, func() (any, error) {
		items, err := s.List(ctx, namespace)
		if err != nil {
			return nil, err
		}
		s.liveMu.Lock()
		defer s.liveMu.Unlock()
		if s.live == nil {
			s.live = map[string]liveQuotas{}
		}
		t := now()
		for ns, e := range s.live {
			if !t.Before(e.until) {
				delete(s.live, ns)
			}
		}
		s.live[namespace] = liveQuotas{items: items, until: t.Add(liveLookupTTL)}
		return items, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]corev1.ResourceQuota), nil
}

// UpdateStatus implements resourcequota.Quotas: the store refuses the
// write with a conflict when q's resourceVersion is no longer the stored
// one.
func (s *quotaStore) UpdateStatus(ctx context.Context, q *corev1.ResourceQuota) error {
	_, _, err := s.status.Update(quotaContext(ctx, q.Namespace, "update", q.Name, "status"), q.Name, quotaCharge{q: q},
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return err
}

// quotaCharge is the charged quota as the update's new object.
type quotaCharge struct{ q *corev1.ResourceQuota }

func (quotaCharge) Preconditions() *metav1.Preconditions { return nil }

func (c quotaCharge) UpdatedObject(context.Context, runtime.Object) (runtime.Object, error) {
	return c.q.DeepCopy(), nil
}
