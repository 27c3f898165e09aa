package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/lru"
)

// Defaults, as kube-controller-manager's.
const (
	// DefaultWorkers is --concurrent-gc-syncs.
	DefaultWorkers = 20
	// DefaultSyncPeriod is how often discovery is checked for new
	// resources (upstream's 30s; kapi also checks when CRDs or
	// APIServices change).
	DefaultSyncPeriod = 30 * time.Second
	// DefaultInitialSyncTimeout bounds the wait for the monitors before the
	// workers start anyway.
	DefaultInitialSyncTimeout = 30 * time.Second
	// absentOwnerCacheSize is upstream's.
	absentOwnerCacheSize = 500
)

// Config is what a Collector is built from.
type Config struct {
	// Client reaches the API server (kapi: its loopback client). Required.
	Client *rest.Config
	// Logger; nil is slog.Default().
	Logger *slog.Logger
	// Workers deletes and orphans concurrently (DefaultWorkers when 0).
	Workers int
	// SyncPeriod is how often discovery is checked (DefaultSyncPeriod
	// when 0).
	SyncPeriod time.Duration
	// InitialSyncTimeout (DefaultInitialSyncTimeout when 0).
	InitialSyncTimeout time.Duration
}

// Collector is the garbage collector. Make it with New; Run it once.
type Collector struct {
	metadata  metadata.Interface
	discovery discovery.DiscoveryInterface
	// mapper maps owner references' kinds to resources. It has its own
	// discovery client (cached), reset when the resources change.
	mapper *restmapper.DeferredDiscoveryRESTMapper
	logger *slog.Logger

	workers            int
	syncPeriod         time.Duration
	initialSyncTimeout time.Duration

	graph    *graph
	monitors *monitors
	// changes feeds the graph builder; deleteQ and orphanQ the workers.
	changes workqueue.TypedInterface[*event]
	deleteQ workqueue.TypedRateLimitingInterface[*node]
	orphanQ workqueue.TypedRateLimitingInterface[*node]
	// absent remembers owners found not to exist (objectRef keys).
	absent *lru.Cache
	// resync asks the sync loop to check discovery now.
	resync chan struct{}
	// pending are the groups whose discovery a resync must read again
	// (those of the CRDs and APIServices that changed); pendingAll asks
	// for all of discovery.
	pendingMu  sync.Mutex
	pending    map[string]bool
	pendingAll bool
}

// New returns a collector for the server c.Client reaches.
func New(c Config) (*Collector, error) {
	if c.Client == nil {
		return nil, errors.New("garbagecollector: Client is required")
	}
	md, err := metadata.NewForConfig(c.Client)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.Client)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	mapperDC, err := discovery.NewDiscoveryClientForConfig(c.Client)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	gc := &Collector{
		metadata:           md,
		discovery:          dc,
		mapper:             restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(mapperDC)),
		logger:             c.Logger,
		workers:            c.Workers,
		syncPeriod:         c.SyncPeriod,
		initialSyncTimeout: c.InitialSyncTimeout,
		graph:              newGraph(),
		monitors:           &monitors{},
		changes:            workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[*event]{Name: "garbage_collector_graph_changes"}),
		deleteQ: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[*node](),
			workqueue.TypedRateLimitingQueueConfig[*node]{Name: "garbage_collector_attempt_to_delete"}),
		orphanQ: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[*node](),
			workqueue.TypedRateLimitingQueueConfig[*node]{Name: "garbage_collector_attempt_to_orphan"}),
		absent: lru.New(absentOwnerCacheSize),
		resync: make(chan struct{}, 1),
	}
	if gc.logger == nil {
		gc.logger = slog.Default()
	}
	if gc.workers <= 0 {
		gc.workers = DefaultWorkers
	}
	if gc.syncPeriod <= 0 {
		gc.syncPeriod = DefaultSyncPeriod
	}
	if gc.initialSyncTimeout <= 0 {
		gc.initialSyncTimeout = DefaultInitialSyncTimeout
	}
	return gc, nil
}

// HasSynced reports whether every monitor has listed its resource.
func (gc *Collector) HasSynced() bool { return gc.monitors.synced() }

// Run collects garbage until ctx ends, then returns once every goroutine
// it started (monitors, graph builder, workers) has.
func (gc *Collector) Run(ctx context.Context) {
	gc.logger.Info("starting controller")
	var wg sync.WaitGroup
	defer func() {
		gc.monitors.stopAll()
		gc.changes.ShutDown()
		gc.deleteQ.ShutDown()
		gc.orphanQ.ShutDown()
		wg.Wait()
		gc.logger.Info("shutting down controller")
	}()
	wg.Go(func() {
		for gc.processGraphChange() {
		}
	})
	wg.Go(func() { gc.syncLoop(ctx) })

	// The workers start once the monitors have listed everything (or the
	// timeout passed: decisions are checked against the API anyway).
	deadline := time.NewTimer(gc.initialSyncTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
wait:
	for !gc.monitors.synced() {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			gc.logger.Warn("not all resource monitors synced; proceeding to collect garbage anyway")
			break wait
		case <-tick.C:
		}
	}
	wg.Go(func() { runWorkers(ctx, gc.deleteQ, gc.workers, gc.deleteOne) })
	wg.Go(func() { runWorkers(ctx, gc.orphanQ, gc.workers, gc.orphanOne) })
	<-ctx.Done()
}

func (gc *Collector) processGraphChange() bool {
	ev, quit := gc.changes.Get()
	if quit {
		return false
	}
	defer gc.changes.Done(ev)
	gc.graph.apply(ev, gc)
	return true
}

// The queues the graph builder feeds (graph.apply's queues).

func (gc *Collector) attemptToDelete(n *node)      { gc.deleteQ.Add(n) }
func (gc *Collector) attemptToDeleteLater(n *node) { gc.deleteQ.AddRateLimited(n) }
func (gc *Collector) attemptToOrphan(n *node)      { gc.orphanQ.Add(n) }
func (gc *Collector) ownerAbsent(r objectRef)      { gc.absent.Add(r, struct{}{}) }

// enqueueVirtualDelete tells the graph builder that ref does not exist.
func (gc *Collector) enqueueVirtualDelete(ref objectRef) {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	gc.changes.Add(&event{
		typ:     deleteEvent,
		virtual: true,
		gvk:     gv.WithKind(ref.Kind),
		obj: &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind},
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID},
		},
	})
}

// triggerResync asks the sync loop to check the discovery of the group
// that the CRD or APIService called name changes soon: a CRD is named
// <plural>.<group>, an APIService <version>.<group> (the core group's
// "v1." asks for all of discovery).
func (gc *Collector) triggerResync(name string) {
	_, group, _ := strings.Cut(name, ".")
	gc.pendingMu.Lock()
	if group == "" {
		gc.pendingAll = true
	} else {
		if gc.pending == nil {
			gc.pending = map[string]bool{}
		}
		gc.pending[group] = true
	}
	gc.pendingMu.Unlock()
	select {
	case gc.resync <- struct{}{}:
	default:
	}
}

// takePending returns the groups to read again and clears them; nil
// means all of discovery.
func (gc *Collector) takePending() map[string]bool {
	gc.pendingMu.Lock()
	defer gc.pendingMu.Unlock()
	groups, all := gc.pending, gc.pendingAll
	gc.pending, gc.pendingAll = nil, false
	if all {
		return nil
	}
	return groups
}

// syncLoop keeps the monitors in step with discovery: at once and every
// syncPeriod all of it, and shortly after a CRD or APIService changed the
// discovery of its group alone, so that adding one CRD costs the work of
// its group, not of every resource served.
func (gc *Collector) syncLoop(ctx context.Context) {
	var current map[schema.GroupVersionResource]string
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		var groups map[string]bool
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			gc.takePending() // all of discovery is read
		case <-gc.resync:
			// Let a burst of changes (a CRD created, then established)
			// settle into one discovery.
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			select {
			case <-gc.resync:
			default:
			}
			if groups = gc.takePending(); groups == nil || current == nil {
				groups = nil
				timer.Stop()
			}
		}
		if groups != nil {
			current = gc.resyncGroups(ctx, current, groups)
			continue // the periodic check keeps its schedule
		}
		current = gc.resyncMonitors(ctx, current)
		timer.Reset(gc.syncPeriod)
	}
}

// resyncMonitors checks discovery and, when the deletable resources
// changed, resets the mapper and the monitors. It returns the resources
// now monitored (current when nothing changed or the sync failed, so the
// next round tries again).
func (gc *Collector) resyncMonitors(ctx context.Context, current map[schema.GroupVersionResource]string) map[schema.GroupVersionResource]string {
	found, failed, err := deletableResources(ctx, gc.discovery)
	if err != nil || len(found) == 0 {
		if ctx.Err() == nil {
			gc.logger.Warn("discovering deletable resources", "err", err)
		}
		return current
	}
	if len(failed) > 0 {
		gc.logger.Info("failed to discover some groups", "groups", fmt.Sprint(failed))
	}
	found = keepFailed(found, gc.monitors.resources(), failed)
	return gc.applyResources(ctx, current, found)
}

// resyncGroups checks the discovery of groups and updates what current
// holds of them, as resyncMonitors does for all of discovery: in place,
// starting and stopping only the monitors of those groups' changed
// resources, so that adding one CRD among many costs the work of its
// group. A group whose discovery fails keeps what is monitored of it (as
// keepFailed); the periodic check reads it again, as it does a resource
// whose monitor could not start (left out of current).
func (gc *Collector) resyncGroups(ctx context.Context, current map[schema.GroupVersionResource]string, groups map[string]bool) map[schema.GroupVersionResource]string {
	set := map[schema.GroupVersionResource]string{}
	read := map[string]map[schema.GroupVersionResource]string{}
	for group := range groups {
		res, err := groupDeletableResources(ctx, gc.discovery, group)
		if err != nil {
			if ctx.Err() == nil {
				gc.logger.Info("failed to discover some groups", "groups", group, "err", err)
			}
			continue
		}
		read[group] = res
		for r, kind := range res {
			if k, ok := current[r]; !ok || k != kind {
				set[r] = kind
			}
		}
	}
	var gone []schema.GroupVersionResource
	for r := range current {
		if res, ok := read[r.Group]; ok {
			if _, still := res[r]; !still {
				gone = append(gone, r)
			}
		}
	}
	if len(set) == 0 && len(gone) == 0 {
		return current
	}
	gc.mapper.Reset()
	failed, err := gc.updateMonitors(ctx, set, gone)
	if err != nil && ctx.Err() == nil {
		gc.logger.Warn("syncing resource monitors", "err", err)
	}
	if ctx.Err() != nil {
		return current
	}
	for _, r := range gone {
		delete(current, r)
	}
	for r, kind := range set {
		if !failed[r] {
			current[r] = kind
		}
	}
	return current
}

// applyResources makes found the monitored resources when they differ
// from current: the mapper is reset (it reads discovery again when next
// used) and the monitors synced. It returns what is now monitored.
func (gc *Collector) applyResources(ctx context.Context, current, found map[schema.GroupVersionResource]string) map[schema.GroupVersionResource]string {
	if current != nil && maps.Equal(current, found) {
		return current
	}
	gc.mapper.Reset()
	if err := gc.syncMonitors(ctx, found); err != nil {
		if ctx.Err() == nil {
			gc.logger.Warn("syncing resource monitors", "err", err)
		}
		return current
	}
	return found
}
