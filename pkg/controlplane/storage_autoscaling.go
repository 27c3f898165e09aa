package controlplane

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/horizontalpodautoscaler"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// autoscalingGroup is the table of autoscaling: HorizontalPodAutoscalers,
// stored once as v2 and served as v2 and, converted, as v1 (v2 is the
// preferred version, listed first).
var autoscalingGroup = apiGroup{name: autoscalingv2.GroupName, versions: []apiVersion{
	{name: "v2", resources: []apiResource{
		{name: "horizontalpodautoscalers", storage: storeAndStatus(horizontalpodautoscaler.NewREST)},
	}},
	{name: "v1", resources: []apiResource{
		{name: "horizontalpodautoscalers", storage: hpaV1Storage},
	}},
}}

var hpaV2Resource = autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")

// hpaV1Storage is the autoscaling/v1 line: views of the v2 line's store
// and status.
func hpaV1Storage(b *storageBuilder) (resourceStorage, error) {
	st, err := storageAs[*generic.Store](b, hpaV2Resource)
	if err != nil {
		return resourceStorage{}, err
	}
	status, err := subresourceAs[*generic.StatusREST](b, hpaV2Resource, "status")
	if err != nil {
		return resourceStorage{}, err
	}
	return resourceStorage{
		storage:      horizontalpodautoscaler.NewV1REST(st),
		subresources: map[string]rest.Storage{"status": horizontalpodautoscaler.NewV1StatusREST(status)},
		shared:       true,
	}, nil
}
