package podtemplate

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	validationcore "github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = corev1.Resource("podtemplates")

// NewREST returns the podtemplates resource on the storage opts makes for
// it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.PodTemplate{} },
		NewListFunc:               func() runtime.Object { return &corev1.PodTemplateList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("podtemplate"),
		NameValidator:             validationcore.ValidatePodName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		ReturnDeletedObject:       true,
		TableConvertor:            TableConvertor,
	})
}

// TableConvertor renders pod templates as kubectl shows them: NAME
// CONTAINERS IMAGES POD LABELS (upstream's printPodTemplate).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Containers", Type: "string", Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Description: "Images referenced by each container in the template."},
		{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		pt, ok := obj.(*corev1.PodTemplate)
		if !ok {
			return nil, false
		}
		names, images := ContainerCells(pt.Template.Spec.Containers)
		return []any{pt.Name, names, images, labels.FormatLabels(pt.Template.Labels)}, true
	},
}

// ContainerCells are the CONTAINERS and IMAGES cells of a template
// (upstream's layoutContainerCells): names and images, comma-separated.
func ContainerCells(containers []corev1.Container) (names, images string) {
	for i, c := range containers {
		if i > 0 {
			names += ","
			images += ","
		}
		names += c.Name
		images += c.Image
	}
	return names, images
}
