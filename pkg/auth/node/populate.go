package node

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Populate keeps g up to date from f's informers of pods, persistent
// volumes, volume attachments and resource slices (upstream's graph
// populator). The caller starts f and waits for its caches.
func Populate(g *Graph, f informers.SharedInformerFactory) error {
	handlers := []struct {
		inf   cache.SharedIndexInformer
		set   func(any)
		unset func(namespace, name string)
	}{
		{f.Core().V1().Pods().Informer(), func(o any) {
			if p, ok := o.(*corev1.Pod); ok {
				g.SetPod(p)
			}
		}, g.DeletePod},
		{f.Core().V1().PersistentVolumes().Informer(), func(o any) {
			if pv, ok := o.(*corev1.PersistentVolume); ok {
				g.SetPersistentVolume(pv)
			}
		}, func(_, name string) { g.DeletePersistentVolume(name) }},
		{f.Storage().V1().VolumeAttachments().Informer(), func(o any) {
			if va, ok := o.(*storagev1.VolumeAttachment); ok {
				g.SetVolumeAttachment(va)
			}
		}, func(_, name string) { g.DeleteVolumeAttachment(name) }},
		{f.Resource().V1().ResourceSlices().Informer(), func(o any) {
			if s, ok := o.(*resourcev1.ResourceSlice); ok {
				g.SetResourceSlice(s)
			}
		}, func(_, name string) { g.DeleteResourceSlice(name) }},
	}
	for _, h := range handlers {
		unset := h.unset
		if _, err := h.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    h.set,
			UpdateFunc: func(_, o any) { h.set(o) },
			DeleteFunc: func(o any) {
				if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
					o = t.Obj
				}
				if m, ok := o.(interface {
					GetNamespace() string
					GetName() string
				}); ok {
					unset(m.GetNamespace(), m.GetName())
				}
			},
		}); err != nil {
			return fmt.Errorf("node authorizer graph: %w", err)
		}
	}
	return nil
}
