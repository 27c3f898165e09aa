package volumeprotection

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// PVFinalizer is the finalizer the StorageObjectInUseProtection admission
// plugin puts on every volume (kubernetes pkg/volume/util,
// PVProtectionFinalizer).
const PVFinalizer = "kubernetes.io/pv-protection"

// PVController is the persistentvolume-protection-controller.
type PVController struct {
	client  kubernetes.Interface
	volumes corelisters.PersistentVolumeLister
	loop    *loop
}

// NewPV returns the controller on the shared volume informer (the caller
// starts it).
func NewPV(client kubernetes.Interface, volumes coreinformers.PersistentVolumeInformer, logger *slog.Logger) (*PVController, error) {
	c := &PVController{client: client, volumes: volumes.Lister()}
	c.loop = newLoop("pvprotection", logger, c.sync)
	h, err := volumes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.volumeChanged,
		UpdateFunc: func(_, obj any) { c.volumeChanged(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("pv protection: volume informer: %w", err)
	}
	c.loop.waitFor = []cache.DoneChecker{h.HasSyncedChecker()}
	return c, nil
}

// Run runs the controller until ctx ends.
func (c *PVController) Run(ctx context.Context) { c.loop.Run(ctx, 1) }

// HasSynced reports whether the informer was synced.
func (c *PVController) HasSynced() bool { return c.loop.HasSynced() }

func (c *PVController) volumeChanged(obj any) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if ok && (needsFinalizer(&pv.ObjectMeta, PVFinalizer) || deletionCandidate(&pv.ObjectMeta, PVFinalizer)) {
		c.loop.queue.Add(pv.Name)
	}
}

func (c *PVController) sync(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	// A volume is in use while its status says Bound (the PV binder
	// sets it; upstream's isBeingUsed).
	if deletionCandidate(&pv.ObjectMeta, PVFinalizer) && pv.Status.Phase != corev1.VolumeBound {
		return c.setFinalizer(ctx, pv, false)
	}
	if needsFinalizer(&pv.ObjectMeta, PVFinalizer) {
		return c.setFinalizer(ctx, pv, true)
	}
	return nil
}

func (c *PVController) setFinalizer(ctx context.Context, pv *corev1.PersistentVolume, add bool) error {
	cp := pv.DeepCopy()
	cp.Finalizers = withFinalizer(cp.Finalizers, PVFinalizer, add)
	if _, err := c.client.CoreV1().PersistentVolumes().Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the finalizers of volume %s: %w", pv.Name, err)
	}
	c.loop.logger.Debug("volume finalizer changed", "volume", pv.Name, "added", add)
	return nil
}
