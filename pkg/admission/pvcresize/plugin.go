// Package pvcresize is the PersistentVolumeClaimResize admission plugin,
// as upstream's plugin/pkg/admission/storage/persistentvolume/resize
// (v1.37): a claim's storage request may only grow when the claim is
// Bound and its StorageClass (the same before and after) says
// allowVolumeExpansion: true.
package pvcresize

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "PersistentVolumeClaimResize"

// betaStorageClassAnnotation names a claim's class before
// spec.storageClassName (upstream's GetPersistentVolumeClaimClass reads
// it first).
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// Getter reads StorageClasses (cluster-scoped: namespace "").
type Getter interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
}

// Plugin is the PersistentVolumeClaimResize admission plugin.
type Plugin struct{ classes Getter }

// New returns the plugin reading StorageClasses through classes.
func New(classes Getter) *Plugin { return &Plugin{classes: classes} }

var _ admission.Validator = (*Plugin)(nil)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles updates, as upstream.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Update }

// Upstream's messages.
var (
	errNotBound   = errors.New("Only bound persistent volume claims can be expanded")
	errNoResizing = errors.New("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize")
)

// Validate refuses growing a claim that is not bound or whose class does
// not allow expansion.
// ReadsObjects implements admission.ObjectReader: only persistent volume
// claims are checked.
func (p *Plugin) ReadsObjects(a admission.Attributes) bool {
	return a.Resource.Group == "" && a.Resource.Resource == "persistentvolumeclaims" && a.Subresource == ""
}

func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "persistentvolumeclaims" || a.Subresource != "" {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	old, ok := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) <= 0 {
		return nil
	}
	if old.Status.Phase != corev1.ClaimBound {
		return admission.NewForbidden(a, errNotBound)
	}
	if !p.allowResize(ctx, pvc, old) {
		return admission.NewForbidden(a, errNoResizing)
	}
	return nil
}

func (p *Plugin) allowResize(ctx context.Context, pvc, old *corev1.PersistentVolumeClaim) bool {
	class, oldClass := classOf(pvc), classOf(old)
	if class == "" || oldClass == "" || class != oldClass {
		return false
	}
	obj, err := p.classes.Get(ctx, "", class)
	if err != nil {
		return false
	}
	sc, ok := obj.(*storagev1.StorageClass)
	return ok && sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
}

func classOf(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[betaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}
