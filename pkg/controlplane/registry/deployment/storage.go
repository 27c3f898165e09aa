package deployment

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/workload"
	appsvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/apps"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = appsv1.Resource("deployments")

// NewREST returns the store of apps/v1 deployments (short name "deploy",
// category "all") and its status and scale subresources, on the storage
// opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, workload.ScaleREST, error) {
	store, err := generic.NewStore(opts, appsv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &appsv1.Deployment{} },
		NewListFunc:               func() runtime.Object { return &appsv1.DeploymentList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: appsv1.Resource("deployment"),
		ResourceShortNames:        []string{"deploy"},
		ResourceCategories:        []string{"all"},
		NameValidator:             appsvalidation.ValidateDeploymentName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
		CheckConversion:           appsvalidation.CheckDeploymentConversion,
	})
	if err != nil {
		return nil, nil, workload.ScaleREST{}, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), workload.NewScaleREST(store, scaleAccessor), nil
}

// scaleAccessor reads and writes a deployment's replicas for /scale.
var scaleAccessor = workload.ReplicasAccessor[*appsv1.Deployment]{
	Kind: "deployment",
	Fields: func(d *appsv1.Deployment) (**int32, int32, *metav1.LabelSelector) {
		return &d.Spec.Replicas, d.Status.Replicas, d.Spec.Selector
	},
}
