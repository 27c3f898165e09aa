package daemonset

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = appsv1.Resource("daemonsets")

// NewREST returns the store of apps/v1 daemonsets (short name "ds",
// category "all") and its status subresource, on the storage opts makes
// for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, appsv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &appsv1.DaemonSet{} },
		NewListFunc:               func() runtime.Object { return &appsv1.DaemonSetList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: appsv1.Resource("daemonset"),
		ResourceShortNames:        []string{"ds"},
		ResourceCategories:        []string{"all"},
		NameValidator:             appsvalidation.ValidateDaemonSetName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
		CheckConversion:           appsvalidation.CheckDaemonSetConversion,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
