// Package storageobjectinuseprotection is the StorageObjectInUseProtection
// admission plugin: new PersistentVolumes get the kubernetes.io/pv-protection
// finalizer, new PersistentVolumeClaims kubernetes.io/pvc-protection and
// new VolumeAttributesClasses kubernetes.io/vac-protection, so that they are not removed while in use (a controller removes the
// finalizer), as upstream's
// plugin/pkg/admission/storage/storageobjectinuseprotection.
package storageobjectinuseprotection

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "StorageObjectInUseProtection"

// The finalizers (upstream pkg/volume/util: PVProtectionFinalizer,
// PVCProtectionFinalizer, VACProtectionFinalizer).
const (
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	VACProtectionFinalizer = "kubernetes.io/vac-protection"
)

// Plugin is the StorageObjectInUseProtection admission plugin.
type Plugin struct{}

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

var _ admission.Mutator = (*Plugin)(nil)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates only.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit adds the finalizer.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes) error {
	if a.Subresource != "" {
		return nil
	}
	if a.Resource.Group == "storage.k8s.io" && a.Resource.Resource == "volumeattributesclasses" {
		// Any served version (upstream's VolumeAttributesClass gate is GA).
		if vac, ok := a.Object.(metav1.Object); ok && !slices.Contains(vac.GetFinalizers(), VACProtectionFinalizer) {
			vac.SetFinalizers(append(vac.GetFinalizers(), VACProtectionFinalizer))
		}
		return nil
	}
	if a.Resource.Group != "" {
		return nil
	}
	switch a.Resource.Resource {
	case "persistentvolumes":
		if pv, ok := a.Object.(*corev1.PersistentVolume); ok && !slices.Contains(pv.Finalizers, PVProtectionFinalizer) {
			pv.Finalizers = append(pv.Finalizers, PVProtectionFinalizer)
		}
	case "persistentvolumeclaims":
		if pvc, ok := a.Object.(*corev1.PersistentVolumeClaim); ok && !slices.Contains(pvc.Finalizers, PVCProtectionFinalizer) {
			pvc.Finalizers = append(pvc.Finalizers, PVCProtectionFinalizer)
		}
	}
	return nil
}
