package volumeprotection

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
)

// VACFinalizer is the finalizer the StorageObjectInUseProtection admission
// plugin puts on every VolumeAttributesClass (kubernetes pkg/volume/util,
// VACProtectionFinalizer).
const VACFinalizer = "kubernetes.io/vac-protection"

// vacIndex indexes claims and volumes by the classes they name (upstream's
// vacNameKeyIndex).
const vacIndex = "vac-name-key-index"

// VACController is the volumeattributesclass-protection-controller.
type VACController struct {
	client  kubernetes.Interface
	classes storagelisters.VolumeAttributesClassLister
	claims  cache.Indexer
	volumes cache.Indexer
	loop    *loop
}

// NewVAC returns the controller on the shared claim, volume and class
// informers (the caller starts them); it adds its index to the claim and
// volume informers.
func NewVAC(client kubernetes.Interface, claims coreinformers.PersistentVolumeClaimInformer, volumes coreinformers.PersistentVolumeInformer,
	classes storageinformers.VolumeAttributesClassInformer, logger *slog.Logger) (*VACController, error) {
	c := &VACController{client: client, classes: classes.Lister(), claims: claims.Informer().GetIndexer(), volumes: volumes.Informer().GetIndexer()}
	c.loop = newLoop("vacprotection", logger, c.sync)
	if err := claims.Informer().AddIndexers(cache.Indexers{vacIndex: func(obj any) ([]string, error) {
		pvc, _ := obj.(*corev1.PersistentVolumeClaim)
		return claimClasses(pvc), nil
	}}); err != nil {
		return nil, fmt.Errorf("vac protection: claim index: %w", err)
	}
	if err := volumes.Informer().AddIndexers(cache.Indexers{vacIndex: func(obj any) ([]string, error) {
		pv, _ := obj.(*corev1.PersistentVolume)
		return volumeClasses(pv), nil
	}}); err != nil {
		return nil, fmt.Errorf("vac protection: volume index: %w", err)
	}
	vh, err := classes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.classChanged,
		UpdateFunc: func(_, obj any) { c.classChanged(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("vac protection: class informer: %w", err)
	}
	// A class may go once a claim or volume stops naming it: an update
	// that dropped a name, or a deletion.
	ch, err := claims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			o, _ := old.(*corev1.PersistentVolumeClaim)
			n, _ := obj.(*corev1.PersistentVolumeClaim)
			c.queueDropped(claimClasses(o), claimClasses(n))
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			pvc, _ := obj.(*corev1.PersistentVolumeClaim)
			c.queueDropped(claimClasses(pvc), nil)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("vac protection: claim informer: %w", err)
	}
	ph, err := volumes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			o, _ := old.(*corev1.PersistentVolume)
			n, _ := obj.(*corev1.PersistentVolume)
			c.queueDropped(volumeClasses(o), volumeClasses(n))
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			pv, _ := obj.(*corev1.PersistentVolume)
			c.queueDropped(volumeClasses(pv), nil)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("vac protection: volume informer: %w", err)
	}
	c.loop.waitFor = []cache.DoneChecker{vh.HasSyncedChecker(), ch.HasSyncedChecker(), ph.HasSyncedChecker()}
	return c, nil
}

// Run runs the controller until ctx ends.
func (c *VACController) Run(ctx context.Context) { c.loop.Run(ctx, 1) }

// HasSynced reports whether the informers were synced.
func (c *VACController) HasSynced() bool { return c.loop.HasSynced() }

func (c *VACController) classChanged(obj any) {
	vac, ok := obj.(*storagev1.VolumeAttributesClass)
	if ok && (needsFinalizer(&vac.ObjectMeta, VACFinalizer) || deletionCandidate(&vac.ObjectMeta, VACFinalizer)) {
		c.loop.queue.Add(vac.Name)
	}
}

// queueDropped queues the classes in before that are not in after.
func (c *VACController) queueDropped(before, after []string) {
	for _, name := range before {
		if !slices.Contains(after, name) {
			c.loop.queue.Add(name)
		}
	}
}

func (c *VACController) sync(ctx context.Context, name string) error {
	vac, err := c.classes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if deletionCandidate(&vac.ObjectMeta, VACFinalizer) {
		if !c.used(name) {
			return c.setFinalizer(ctx, vac, false)
		}
		c.loop.logger.Debug("keeping the class: a claim or volume names it", "class", name)
	}
	if needsFinalizer(&vac.ObjectMeta, VACFinalizer) {
		return c.setFinalizer(ctx, vac, true)
	}
	return nil
}

// used reports whether a volume or claim of the informers names the class
// (an index error counts as used, as upstream).
func (c *VACController) used(name string) bool {
	for _, idx := range []cache.Indexer{c.volumes, c.claims} {
		objs, err := idx.ByIndex(vacIndex, name)
		if err != nil || len(objs) > 0 {
			return true
		}
	}
	return false
}

func (c *VACController) setFinalizer(ctx context.Context, vac *storagev1.VolumeAttributesClass, add bool) error {
	cp := vac.DeepCopy()
	cp.Finalizers = withFinalizer(cp.Finalizers, VACFinalizer, add)
	if _, err := c.client.StorageV1().VolumeAttributesClasses().Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the finalizers of volume attributes class %s: %w", vac.Name, err)
	}
	return nil
}

// claimClasses are the classes a claim names: its spec's, its status's
// current one and the target of a modification in progress.
func claimClasses(pvc *corev1.PersistentVolumeClaim) []string {
	if pvc == nil {
		return nil
	}
	var out []string
	add := func(name string) {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if n := pvc.Spec.VolumeAttributesClassName; n != nil {
		add(*n)
	}
	if n := pvc.Status.CurrentVolumeAttributesClassName; n != nil {
		add(*n)
	}
	if s := pvc.Status.ModifyVolumeStatus; s != nil {
		add(s.TargetVolumeAttributesClassName)
	}
	return out
}

// volumeClasses is the class a volume names, if any.
func volumeClasses(pv *corev1.PersistentVolume) []string {
	if pv == nil || pv.Spec.VolumeAttributesClassName == nil || *pv.Spec.VolumeAttributesClassName == "" {
		return nil
	}
	return []string{*pv.Spec.VolumeAttributesClassName}
}
