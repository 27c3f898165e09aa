package validatingadmissionpolicy

import (
	"context"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Resource is the resource served.
var Resource = arv1.Resource("validatingadmissionpolicies")

// NewREST returns the validatingadmissionpolicies resource and its status
// subresource.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, arv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &arv1.ValidatingAdmissionPolicy{} },
		NewListFunc:               func() runtime.Object { return &arv1.ValidatingAdmissionPolicyList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: arv1.Resource("validatingadmissionpolicy"),
		ResourceCategories:        []string{"api-extensions"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}

// StatusWriter writes policies' status through the status subresource
// (for the admission plugin's type checking).
type StatusWriter struct{ Status *generic.StatusREST }

// UpdateStatus writes p's status if p is still the stored version.
func (w StatusWriter) UpdateStatus(ctx context.Context, p *arv1.ValidatingAdmissionPolicy) error {
	_, _, err := w.Status.Update(ctx, p.Name, statusUpdate{p}, nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return err
}

// statusUpdate is the policy to write (its resourceVersion makes a stale
// write a conflict).
type statusUpdate struct {
	p *arv1.ValidatingAdmissionPolicy
}

func (u statusUpdate) Preconditions() *metav1.Preconditions { return nil }

func (u statusUpdate) UpdatedObject(context.Context, runtime.Object) (runtime.Object, error) {
	return u.p.DeepCopy(), nil
}
