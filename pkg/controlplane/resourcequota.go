package controlplane

import (
	"context"
	"fmt"

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
}

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
