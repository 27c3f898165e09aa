package statefulset

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
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
	return store, generic.NewStatusREST(store, StatusStrategy), workload.NewScaleREST(store, scaleAccessor{}), nil
}

// scaleAccessor reads and writes a statefulset's replicas for /scale.
type scaleAccessor struct{}

func (scaleAccessor) Replicas(obj runtime.Object) (int32, int32, string, error) {
	ss, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		return 0, 0, "", fmt.Errorf("not a statefulset: %T", obj)
	}
	var spec int32
	if ss.Spec.Replicas != nil {
		spec = *ss.Spec.Replicas
	}
	return spec, ss.Status.Replicas, workload.SelectorString(ss.Spec.Selector), nil
}

func (scaleAccessor) SetReplicas(obj runtime.Object, replicas int32) error {
	ss, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		return fmt.Errorf("not a statefulset: %T", obj)
	}
	ss.Spec.Replicas = &replicas
	return nil
}
