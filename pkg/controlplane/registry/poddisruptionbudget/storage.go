package poddisruptionbudget

import (
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = policyv1.Resource("poddisruptionbudgets")

// NewREST returns the poddisruptionbudgets resource (short name "pdb") and
// its status subresource, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, policyv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
		NewListFunc:               func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: policyv1.Resource("poddisruptionbudget"),
		ResourceShortNames:        []string{"pdb"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
