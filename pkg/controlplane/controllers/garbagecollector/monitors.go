package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
)

// ignoredResources are not watched (upstream's DefaultIgnoredResources):
// events are many, short-lived and never anyone's owner.
var ignoredResources = map[schema.GroupResource]bool{
	{Group: "", Resource: "events"}:              true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// resyncTriggers are the resources whose changes change discovery: a
// change to one of them makes the collector look for new resources at
// once rather than at the next SyncPeriod.
var resyncTriggers = map[schema.GroupKind]bool{
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:             true,
}

// monitor watches one resource. Its informer is a plain one (a reflector,
// a store and one handler called in line), not a shared informer: nothing
// else in the process reads these caches, and a shared informer's
// per-handler buffer (1,024 entries) and goroutines, paid once per
// resource, were the largest part of an idle server's memory.
type monitor struct {
	gvk      schema.GroupVersionKind
	store    cache.Store
	informer cache.Controller
	cancel   context.CancelFunc
}

// monitors are the running monitors, by resource.
type monitors struct {
	mu  sync.RWMutex
	byR map[schema.GroupVersionResource]*monitor
	wg  sync.WaitGroup
}

// lookup returns the object namespace/name from the cache of gvr's
// monitor, if it has synced and holds it.
func (m *monitors) lookup(gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, bool) {
	m.mu.RLock()
	mon := m.byR[gvr]
	m.mu.RUnlock()
	if mon == nil || !mon.informer.HasSynced() {
		return nil, false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok, err := mon.store.GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	p, ok := obj.(*metav1.PartialObjectMetadata)
	return p, ok
}

// synced reports whether there are monitors and all of them have synced.
func (m *monitors) synced() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(m.byR) == 0 {
		return false
	}
	for _, mon := range m.byR {
		if !mon.informer.HasSynced() {
			return false
		}
	}
	return true
}

// resources returns the monitored resources with their kinds.
func (m *monitors) resources() map[schema.GroupVersionResource]string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[schema.GroupVersionResource]string, len(m.byR))
	for r, mon := range m.byR {
		out[r] = mon.gvk.Kind
	}
	return out
}

// stopAll stops every monitor and waits for them.
func (m *monitors) stopAll() {
	m.mu.Lock()
	for _, mon := range m.byR {
		mon.cancel()
	}
	m.byR = nil
	m.mu.Unlock()
	m.wg.Wait()
}

// deletableResources returns the preferred version of every resource that
// can be listed, watched and deleted (upstream's GetDeletableResources),
// with its kind. With a partial discovery failure it returns what it
// found and the group-versions that failed.
func deletableResources(ctx context.Context, dc discovery.DiscoveryInterface) (map[schema.GroupVersionResource]string, map[schema.GroupVersion]error, error) {
	lists, err := discovery.ServerPreferredResources(dc)
	var failed map[schema.GroupVersion]error
	if err != nil {
		var groupErr *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &groupErr) {
			return nil, nil, fmt.Errorf("discover preferred resources: %w", err)
		}
		failed = groupErr.Groups
	}
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	out := map[schema.GroupVersionResource]string{}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		addDeletable(out, gv, list.APIResources)
	}
	return out, failed, nil
}

// deletableVerbs are the verbs a resource needs to be monitored.
var deletableVerbs = discovery.SupportsAllVerbs{Verbs: []string{"delete", "list", "watch"}}

// addDeletable adds to out the resources of gv (subresources skipped)
// that support deletableVerbs, with their kinds.
func addDeletable(out map[schema.GroupVersionResource]string, gv schema.GroupVersion, resources []metav1.APIResource) {
	for _, r := range resources {
		if strings.Contains(r.Name, "/") || !deletableVerbs.Match(gv.String(), &r) {
			continue // a subresource, or not deletable
		}
		out[gv.WithResource(r.Name)] = r.Kind
	}
}

// groupDeletableResources returns what deletableResources returns for
// the resources of one group, read from that group's legacy discovery
// documents only (/apis/<group> and /apis/<group>/<version>): the work
// is that of the group, not of every group served. A group not served
// has none. The preferred version of each resource is chosen as
// discovery.ServerPreferredResources chooses it: the group's preferred
// version if it has the resource, else the first version listing it.
func groupDeletableResources(ctx context.Context, dc discovery.DiscoveryInterface, group string) (map[schema.GroupVersionResource]string, error) {
	var g metav1.APIGroup
	if err := dc.RESTClient().Get().AbsPath("/apis", group).Do(ctx).Into(&g); err != nil {
		if apierrors.IsNotFound(err) {
			return map[schema.GroupVersionResource]string{}, nil
		}
		return nil, fmt.Errorf("discover group %q: %w", group, err)
	}
	type choice struct {
		version  string
		resource metav1.APIResource
	}
	chosen := map[string]choice{}
	for _, v := range g.Versions {
		list, err := dc.ServerResourcesForGroupVersion(v.GroupVersion)
		if apierrors.IsNotFound(err) {
			continue // went meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("discover %s: %w", v.GroupVersion, err)
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			if _, seen := chosen[r.Name]; seen && v.Version != g.PreferredVersion.Version {
				continue
			}
			chosen[r.Name] = choice{version: v.Version, resource: r}
		}
	}
	out := map[schema.GroupVersionResource]string{}
	for _, c := range chosen {
		addDeletable(out, schema.GroupVersion{Group: group, Version: c.version}, []metav1.APIResource{c.resource})
	}
	return out, nil
}

// syncMonitors makes the running monitors those of resources (with
// their kinds, as discovery gives them): new ones are started, gone ones
// stopped.
func (gc *Collector) syncMonitors(ctx context.Context, resources map[schema.GroupVersionResource]string) error {
	m := gc.monitors
	m.mu.RLock()
	var gone []schema.GroupVersionResource
	for r := range m.byR {
		if _, ok := resources[r]; !ok {
			gone = append(gone, r)
		}
	}
	m.mu.RUnlock()
	_, err := gc.updateMonitors(ctx, resources, gone)
	return err
}

// updateMonitors starts a monitor for each resource of set that has none
// (ignored resources excepted) and stops those of remove, in place, so
// that a change of one group costs the work of its resources. It returns
// the resources of set it could not start a monitor for, with the
// errors. (Syncs run one at a time, on the collector's sync loop; the
// monitors' lock is held for the change.)
func (gc *Collector) updateMonitors(ctx context.Context, set map[schema.GroupVersionResource]string, remove []schema.GroupVersionResource) (failed map[schema.GroupVersionResource]bool, err error) {
	m := gc.monitors
	m.mu.Lock()
	defer m.mu.Unlock()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if m.byR == nil {
		m.byR = map[schema.GroupVersionResource]*monitor{}
	}
	removed := 0
	for _, r := range remove {
		if mon, ok := m.byR[r]; ok {
			mon.cancel()
			delete(m.byR, r)
			removed++
		}
	}
	var errs []error
	fail := func(r schema.GroupVersionResource, err error) {
		if failed == nil {
			failed = map[schema.GroupVersionResource]bool{}
		}
		failed[r] = true
		errs = append(errs, err)
	}
	added := 0
	for r, kind := range set {
		if _, ok := m.byR[r]; ok {
			continue
		}
		if ignoredResources[r.GroupResource()] {
			continue
		}
		// The kind discovery lists is the one the mapper would give; the
		// mapper is asked only when discovery has none, so that a new
		// resource does not make it read all of discovery again.
		gvk := r.GroupVersion().WithKind(kind)
		if kind == "" {
			var err error
			if gvk, err = gc.mapper.KindFor(r); err != nil {
				fail(r, fmt.Errorf("look up the kind of %s: %w", r, err))
				continue
			}
		}
		mon, err := gc.newMonitor(r, gvk)
		if err != nil {
			fail(r, fmt.Errorf("monitor %s: %w", r, err))
			continue
		}
		mctx, cancel := context.WithCancel(ctx)
		mon.cancel = cancel
		m.byR[r] = mon
		m.wg.Go(func() { mon.informer.RunWithContext(mctx) })
		added++
	}
	if added+removed > 0 {
		gc.logger.Info("synced monitors", "added", added, "removed", removed, "total", len(m.byR))
	}
	return failed, errors.Join(errs...)
}

// newMonitor makes an informer of r's metadata whose events feed the
// graph builder.
func (gc *Collector) newMonitor(r schema.GroupVersionResource, gvk schema.GroupVersionKind) (*monitor, error) {
	client := gc.metadata.Resource(r).Namespace(metav1.NamespaceAll)
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.Watch(ctx, opts)
		},
	}, gc.metadata)
	trigger := resyncTriggers[gvk.GroupKind()]
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			p, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				return
			}
			gc.changes.Add(&event{typ: addEvent, gvk: gvk, obj: p})
			if trigger {
				gc.triggerResync(p.Name)
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			p, ok := obj.(*metav1.PartialObjectMetadata)
			old, okOld := oldObj.(*metav1.PartialObjectMetadata)
			if !ok || !okOld {
				return
			}
			if trigger {
				gc.triggerResync(p.Name)
			}
			// Only what the graph keeps matters.
			if !relevantChange(old, p) {
				return
			}
			gc.changes.Add(&event{typ: updateEvent, gvk: gvk, obj: p, old: old})
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			p, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				return
			}
			gc.changes.Add(&event{typ: deleteEvent, gvk: gvk, obj: p})
			if trigger {
				gc.triggerResync(p.Name)
			}
		},
	}
	store, inf := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &metav1.PartialObjectMetadata{},
		Handler:       handler,
		// Managed fields are never read: do not keep them.
		Transform: func(obj any) (any, error) {
			if p, ok := obj.(*metav1.PartialObjectMetadata); ok {
				p.ManagedFields = nil
			}
			return obj, nil
		},
	})
	return &monitor{gvk: gvk, store: store, informer: inf}, nil
}

// relevantChange reports whether an update changes what the graph keeps:
// owner references, finalizers, the deletion mark.
func relevantChange(old, cur *metav1.PartialObjectMetadata) bool {
	if (old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) || old.UID != cur.UID {
		return true
	}
	if !slices.Equal(old.Finalizers, cur.Finalizers) {
		return true
	}
	if len(old.OwnerReferences) != len(cur.OwnerReferences) {
		return true
	}
	for i := range old.OwnerReferences {
		a, b := old.OwnerReferences[i], cur.OwnerReferences[i]
		if a.UID != b.UID || a.Name != b.Name || a.Kind != b.Kind || a.APIVersion != b.APIVersion ||
			!boolPtrEqual(a.BlockOwnerDeletion, b.BlockOwnerDeletion) || !boolPtrEqual(a.Controller, b.Controller) {
			return true
		}
	}
	return false
}

func boolPtrEqual(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// keepFailed adds to resources the monitored resources of groups whose
// discovery failed, so a transient failure does not stop their monitors.
func keepFailed(resources, monitored map[schema.GroupVersionResource]string, failed map[schema.GroupVersion]error) map[schema.GroupVersionResource]string {
	if len(failed) == 0 {
		return resources
	}
	out := maps.Clone(resources)
	for r := range monitored {
		if _, ok := failed[r.GroupVersion()]; ok {
			out[r] = monitored[r]
		}
	}
	return out
}
