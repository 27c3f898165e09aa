package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = appsv1.Resource("statefulsets")

// NewREST returns the store of apps/v1 statefulsets (short name "sts",
// category "all") and its status and scale subresources, on the storage
// opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, workload.ScaleREST, error) {
	store, err := generic.NewStore(opts, appsv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &appsv1.StatefulSet{} },
		NewListFunc:               func() runtime.Object { return &appsv1.StatefulSetList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: appsv1.Resource("statefulset"),
		ResourceShortNames:        []string{"sts"},
		ResourceCategories:        []string{"all"},
		NameValidator:             appsvalidation.ValidateStatefulSetName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, workload.ScaleREST{}, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), workload.NewScaleREST(store, scaleAccessor), nil
}

// scaleAccessor reads and writes a statefulset's replicas for /scale.
var scaleAccessor = workload.ReplicasAccessor[*appsv1.StatefulSet]{
	Kind: "statefulset",
	Fields: func(ss *appsv1.StatefulSet) (**int32, int32, *metav1.LabelSelector) {
		return &ss.Spec.Replicas, ss.Status.Replicas, ss.Spec.Selector
	},
}
