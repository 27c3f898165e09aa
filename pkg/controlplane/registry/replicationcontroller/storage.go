package replicationcontroller

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = corev1.Resource("replicationcontrollers")

// NewREST returns the completed store of core/v1 replicationcontrollers
// and their status and scale subresources, on the storage opts makes for
// them.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, *generic.ScaleREST, error) {
	store, err := generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.ReplicationController{} },
		NewListFunc:               func() runtime.Object { return &corev1.ReplicationControllerList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("replicationcontroller"),
		ResourceShortNames:        []string{"rc"},
		ResourceCategories:        []string{"all"},
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		NameValidator:             core.ValidateReplicationControllerName,
		// +k8s:subfield(name)=+k8s:format=k8s-long-name, beta
		// (k8s.io/kubernetes@v1.37.2 pkg/apis/core/v1/zz_generated.validations.go).
		NameDeclarative: declarative.LongName,
		CreateStrategy:  Strategy,
		UpdateStrategy:  Strategy,
		DeleteStrategy:  Strategy,
		TableConvertor:  TableConvertor,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), generic.NewScaleREST(store, scaleAccessor{}), nil
}

// scaleAccessor reads and writes the replicas of a controller for its
// scale subresource: spec.replicas, status.replicas, and spec.selector as
// a label selector string (upstream's scaleFromRC).
type scaleAccessor struct{}

var _ generic.ScaleAccessor = scaleAccessor{}

func (scaleAccessor) Replicas(obj runtime.Object) (int32, int32, string, error) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return 0, 0, "", fmt.Errorf("not a replication controller: %T", obj)
	}
	spec := int32(0)
	if rc.Spec.Replicas != nil {
		spec = *rc.Spec.Replicas
	}
	return spec, rc.Status.Replicas, labels.SelectorFromSet(rc.Spec.Selector).String(), nil
}

func (scaleAccessor) SetReplicas(obj runtime.Object, replicas int32) error {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return fmt.Errorf("not a replication controller: %T", obj)
	}
	rc.Spec.Replicas = &replicas
	return nil
}
