package horizontalpodautoscaler

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = autoscalingv2.Resource("horizontalpodautoscalers")

// NewREST returns the autoscaling/v2 horizontalpodautoscalers resource
// (short name "hpa", category "all") and its status subresource, on the
// storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, autoscalingv2.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		NewListFunc:               func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: autoscalingv2.Resource("horizontalpodautoscaler"),
		ResourceShortNames:        []string{"hpa"},
		ResourceCategories:        []string{"all"},
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
