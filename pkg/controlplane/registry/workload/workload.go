package workload

import (
	"context"
	"fmt"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Column definitions every workload table shares (upstream's
// pkg/printers/internalversion/printers.go, v1.37).
var (
	ContainersColumn = metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
	ImagesColumn     = metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}
)

// ContainerCells returns the containers' names and images, each joined
// by commas (upstream's layoutContainerCells).
func ContainerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	i := make([]string, len(containers))
	for k, c := range containers {
		n[k], i[k] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

// ScaleTableConvertor renders autoscaling/v1 Scale objects as upstream's
// printScale: NAME DESIRED AVAILABLE AGE (the Name column has no "name"
// format there).
var ScaleTableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Description: table.ObjectMetaDescriptions["name"]},
		{Name: "Desired", Type: "integer", Description: autoscalingv1.ScaleSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Available", Type: "integer", Description: autoscalingv1.ScaleStatus{}.SwaggerDoc()["replicas"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		s, ok := obj.(*autoscalingv1.Scale)
		if !ok {
			return nil, false
		}
		return []any{s.Name, int64(s.Spec.Replicas), int64(s.Status.Replicas), table.Since(s.CreationTimestamp)}, true
	},
}

// ScaleREST is the scale subresource of a workload: the generic scale
// subresource with upstream's Scale table.
type ScaleREST struct {
	*generic.ScaleREST
}

var (
	_ rest.Getter         = ScaleREST{}
	_ rest.Updater        = ScaleREST{}
	_ rest.TableConvertor = ScaleREST{}
)

// NewScaleREST returns the scale subresource of store.
func NewScaleREST(store *generic.Store, accessor generic.ScaleAccessor) ScaleREST {
	return ScaleREST{generic.NewScaleREST(store, accessor)}
}

// ConvertToTable implements rest.TableConvertor.
func (ScaleREST) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	return ScaleTableConvertor.ConvertToTable(ctx, object, tableOptions)
}

// SelectorString is the label selector as upstream's Scale and deployment
// table show it (labels.Selector's String); "" for a selector that does
// not parse.
func SelectorString(sel *metav1.LabelSelector) string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return ""
	}
	return s.String()
}

// ReplicasAccessor is the /scale accessor of an apps/v1 workload of type
// T: the spec's replicas (0 when unset), the status's replicas and the
// spec's selector, which Fields locates in an object.
type ReplicasAccessor[T runtime.Object] struct {
	// Kind names T in the error for another type ("deployment").
	Kind   string
	Fields func(T) (spec **int32, status int32, selector *metav1.LabelSelector)
}

var _ generic.ScaleAccessor = ReplicasAccessor[runtime.Object]{}

// Replicas returns the spec and status replicas and the selector of obj.
func (a ReplicasAccessor[T]) Replicas(obj runtime.Object) (int32, int32, string, error) {
	o, ok := obj.(T)
	if !ok {
		return 0, 0, "", fmt.Errorf("not a %s: %T", a.Kind, obj)
	}
	spec, status, selector := a.Fields(o)
	var replicas int32
	if *spec != nil {
		replicas = **spec
	}
	return replicas, status, SelectorString(selector), nil
}

// SetReplicas sets the spec's replicas of obj.
func (a ReplicasAccessor[T]) SetReplicas(obj runtime.Object, replicas int32) error {
	o, ok := obj.(T)
	if !ok {
		return fmt.Errorf("not a %s: %T", a.Kind, obj)
	}
	spec, _, _ := a.Fields(o)
	*spec = &replicas
	return nil
}
