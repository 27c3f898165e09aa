package persistentvolume

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// Resource is the resource served.
var Resource = corev1.Resource("persistentvolumes")

// NewREST returns the completed store of core/v1 persistentvolumes and
// their status subresource, on the storage opts makes for them.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.PersistentVolume{} },
		NewListFunc:               func() runtime.Object { return &corev1.PersistentVolumeList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("persistentvolume"),
		ResourceShortNames:        []string{"pv"},
		NameValidator:             core.ValidatePersistentVolumeName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}
