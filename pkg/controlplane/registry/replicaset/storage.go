package replicaset

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = appsv1.Resource("replicasets")

// NewREST returns the store of apps/v1 replicasets (short name "rs",
// category "all") and its status and scale subresources, on the storage
// opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, workload.ScaleREST, error) {
	store, err := generic.NewStore(opts, appsv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &appsv1.ReplicaSet{} },
		NewListFunc:               func() runtime.Object { return &appsv1.ReplicaSetList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: appsv1.Resource("replicaset"),
		ResourceShortNames:        []string{"rs"},
		ResourceCategories:        []string{"all"},
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		NameValidator:             appsvalidation.ValidateReplicaSetName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, workload.ScaleREST{}, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), workload.NewScaleREST(store, scaleAccessor{}), nil
}

// scaleAccessor reads and writes a replicaset's replicas for /scale.
type scaleAccessor struct{}

func (scaleAccessor) Replicas(obj runtime.Object) (int32, int32, string, error) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return 0, 0, "", fmt.Errorf("not a replicaset: %T", obj)
	}
	var spec int32
	if rs.Spec.Replicas != nil {
		spec = *rs.Spec.Replicas
	}
	return spec, rs.Status.Replicas, workload.SelectorString(rs.Spec.Selector), nil
}

func (scaleAccessor) SetReplicas(obj runtime.Object, replicas int32) error {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return fmt.Errorf("not a replicaset: %T", obj)
	}
	rs.Spec.Replicas = &replicas
	return nil
}
