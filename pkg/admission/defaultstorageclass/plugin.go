// Package defaultstorageclass is the DefaultStorageClass admission plugin,
// as upstream's plugin/pkg/admission/storage/storageclass/setdefault: a new
// PersistentVolumeClaim that names no storage class (neither
// spec.storageClassName nor the beta annotation) gets the default
// StorageClass (annotated storageclass.kubernetes.io/is-default-class=true;
// of several, the newest, then by name).
//
// It reads StorageClasses through a small interface (Lister):
// storage.k8s.io is not served on main yet, so the plugin is reported
// unavailable until a Lister is given.
package defaultstorageclass

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "DefaultStorageClass"

// The annotations (upstream pkg/apis/storage/util).
const (
	IsDefaultAnnotation        = "storageclass.kubernetes.io/is-default-class"
	BetaIsDefaultAnnotation    = "storageclass.beta.kubernetes.io/is-default-class"
	BetaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"
)

// Lister lists StorageClasses (a *storagev1.StorageClassList).
type Lister interface {
	List(ctx context.Context, namespace string) (runtime.Object, error)
}

// Plugin is the DefaultStorageClass admission plugin.
type Plugin struct{ classes Lister }

// New returns the plugin listing StorageClasses through classes.
func New(classes Lister) *Plugin { return &Plugin{classes: classes} }

var _ admission.Mutator = (*Plugin)(nil)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit sets the default class on claims without one.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "persistentvolumeclaims" || a.Subresource != "" {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	if _, beta := pvc.Annotations[BetaStorageClassAnnotation]; beta || pvc.Spec.StorageClassName != nil {
		return nil
	}
	def, err := p.defaultClass(ctx)
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if def != nil {
		name := def.Name
		pvc.Spec.StorageClassName = &name
	}
	return nil
}

func isDefault(sc *storagev1.StorageClass) bool {
	return sc.Annotations[IsDefaultAnnotation] == "true" || sc.Annotations[BetaIsDefaultAnnotation] == "true"
}

// defaultClass is the newest default class (then by name), or nil.
func (p *Plugin) defaultClass(ctx context.Context) (*storagev1.StorageClass, error) {
	obj, err := p.classes.List(ctx, "")
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*storagev1.StorageClassList)
	if !ok {
		return nil, fmt.Errorf("defaultstorageclass: listed a %T", obj)
	}
	var defaults []*storagev1.StorageClass
	for i := range list.Items {
		if isDefault(&list.Items[i]) {
			defaults = append(defaults, &list.Items[i])
		}
	}
	if len(defaults) == 0 {
		return nil, nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp, defaults[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.After(tj.Time)
		}
		return defaults[i].Name < defaults[j].Name
	})
	return defaults[0], nil
}
