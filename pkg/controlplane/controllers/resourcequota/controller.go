package resourcequota

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kapi-dev/kapi/pkg/client/lazy"
	"github.com/kapi-dev/kapi/pkg/quota"
)

// DefaultResyncPeriod is kube-controller-manager's
// --resource-quota-sync-period default.
const DefaultResyncPeriod = 5 * time.Minute

// Config configures the controller.
type Config struct {
	// Client reaches the API (a loopback config).
	Client *rest.Config
	// ResyncPeriod: every quota is recomputed this often (0: the default).
	ResyncPeriod time.Duration
	Logger       *slog.Logger
}

// Controller is the resource quota controller.
type Controller struct {
	client   kubernetes.Interface
	meta     metadata.Interface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	logger   *slog.Logger
	resync   time.Duration
	factory  informers.SharedInformerFactory
	quotas   corelisters.ResourceQuotaLister
	pods     corelisters.PodLister
	services corelisters.ServiceLister
	claims   corelisters.PersistentVolumeClaimLister
	synced   []cache.DoneChecker
	queue    workqueue.TypedRateLimitingInterface[string]
	ready    atomic.Bool
	now      func() time.Time
}

// New returns the resourcequota controller.
func New(c Config) (*Controller, error) {
	client, err := lazy.NewForConfig(c.Client)
	if err != nil {
		return nil, fmt.Errorf("resourcequota controller client: %w", err)
	}
	meta, err := metadata.NewForConfig(c.Client)
	if err != nil {
		return nil, fmt.Errorf("resourcequota controller metadata client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.Client)
	if err != nil {
		return nil, fmt.Errorf("resourcequota controller discovery: %w", err)
	}
	if c.ResyncPeriod <= 0 {
		c.ResyncPeriod = DefaultResyncPeriod
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	rc := &Controller{
		client: client,
		meta:   meta,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		logger: c.Logger,
		resync: c.ResyncPeriod,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "resourcequota"}),
		now: time.Now,
	}
	rc.factory = informers.NewSharedInformerFactory(client, 0)
	quotas := rc.factory.Core().V1().ResourceQuotas()
	rc.quotas = quotas.Lister()
	qh, err := quotas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: rc.enqueueQuota,
		UpdateFunc: func(old, cur any) {
			o, c := old.(*corev1.ResourceQuota), cur.(*corev1.ResourceQuota)
			// Charges by admission change status only: not a reason
			// to recount (upstream's updateQuota).
			if !quota.Equal(o.Spec.Hard, c.Spec.Hard) || !equalScopes(o, c) {
				rc.enqueueQuota(cur)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	rc.synced = append(rc.synced, qh.HasSyncedChecker())
	// Replenishment: what deleted (or ended) objects held is given back.
	replenish := cache.ResourceEventHandlerFuncs{DeleteFunc: rc.enqueueNamespaceOf}
	pods := rc.factory.Core().V1().Pods()
	rc.pods = pods.Lister()
	ph, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: rc.enqueueNamespaceOf,
		UpdateFunc: func(old, cur any) {
			o, c := old.(*corev1.Pod), cur.(*corev1.Pod)
			if quota.Counts(o, rc.now()) && !quota.Counts(c, rc.now()) {
				rc.enqueueNamespaceOf(cur)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	services := rc.factory.Core().V1().Services()
	rc.services = services.Lister()
	sh, err := services.Informer().AddEventHandler(replenish)
	if err != nil {
		return nil, err
	}
	claims := rc.factory.Core().V1().PersistentVolumeClaims()
	rc.claims = claims.Lister()
	ch, err := claims.Informer().AddEventHandler(replenish)
	if err != nil {
		return nil, err
	}
	cmh, err := rc.factory.Core().V1().ConfigMaps().Informer().AddEventHandler(replenish)
	if err != nil {
		return nil, err
	}
	sech, err := rc.factory.Core().V1().Secrets().Informer().AddEventHandler(replenish)
	if err != nil {
		return nil, err
	}
	rc.synced = append(rc.synced, ph.HasSyncedChecker(), sh.HasSyncedChecker(), ch.HasSyncedChecker(), cmh.HasSyncedChecker(), sech.HasSyncedChecker())
	return rc, nil
}

func equalScopes(a, b *corev1.ResourceQuota) bool {
	x, y := quota.ScopeSelectors(a), quota.ScopeSelectors(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].ScopeName != y[i].ScopeName || x[i].Operator != y[i].Operator || fmt.Sprint(x[i].Values) != fmt.Sprint(y[i].Values) {
			return false
		}
	}
	return true
}

func (rc *Controller) enqueueQuota(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		rc.queue.Add(key)
	}
}

// enqueueNamespaceOf queues every quota of the namespace of a deleted or
// ended object.
func (rc *Controller) enqueueNamespaceOf(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	qs, err := rc.quotas.ResourceQuotas(m.GetNamespace()).List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range qs {
		rc.enqueueQuota(q)
	}
}

// HasSynced reports whether the controller's caches synced.
func (rc *Controller) HasSynced() bool { return rc.ready.Load() }

// Run runs the controller until ctx ends.
func (rc *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer rc.queue.ShutDown()
	defer rc.factory.Shutdown()
	// With the context, not ctx.Done(): contexts derived from a channel's
	// context cost a goroutine each (it is not a cancelCtx).
	rc.factory.StartWithContext(ctx)
	if !cache.WaitFor(ctx, "", rc.synced...) { // notified, not polled
		return
	}
	rc.logger.Info("starting controller")
	rc.ready.Store(true)
	for range 2 {
		wg.Go(func() {
			for rc.processNext(ctx) {
			}
		})
	}
	wg.Go(func() {
		t := time.NewTicker(rc.resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				qs, err := rc.quotas.List(labels.Everything())
				if err != nil {
					continue
				}
				for _, q := range qs {
					rc.enqueueQuota(q)
				}
			}
		}
	})
	<-ctx.Done()
	rc.logger.Info("shutting down controller")
}

func (rc *Controller) processNext(ctx context.Context) bool {
	key, quit := rc.queue.Get()
	if quit {
		return false
	}
	defer rc.queue.Done(key)
	if err := rc.sync(ctx, key); err != nil {
		if ctx.Err() == nil && !apierrors.IsConflict(err) {
			rc.logger.Warn("syncing resource quota", "quota", key, "err", err)
		}
		rc.queue.AddRateLimited(key)
		return true
	}
	rc.queue.Forget(key)
	return true
}

func (rc *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	q, err := rc.quotas.ResourceQuotas(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	used, err := rc.Usage(ctx, q)
	if err != nil {
		return err
	}
	if quota.Equal(q.Status.Hard, q.Spec.Hard) && quota.Equal(q.Status.Used, used) {
		return nil
	}
	out := q.DeepCopy()
	out.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard.DeepCopy(), Used: used}
	_, err = rc.client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Usage computes what the objects of q's namespace in q's scopes charge,
// for each resource q's spec limits (zero for those nothing charges).
func (rc *Controller) Usage(ctx context.Context, q *corev1.ResourceQuota) (corev1.ResourceList, error) {
	names := quota.Names(q.Spec.Hard)
	// Evaluate as admission does, on the limits to be.
	probe := q.DeepCopy()
	probe.Status.Hard = q.Spec.Hard
	used := corev1.ResourceList{}
	for _, n := range names {
		used[n] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	now := rc.now()
	add := func(gr schema.GroupResource, objs []runtime.Object) error {
		ev := quota.For(gr)
		for _, obj := range objs {
			ok, err := quota.Matches(probe, obj, ev)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			u, err := ev.Usage(obj, now)
			if err != nil {
				return err
			}
			used = quota.Add(used, quota.Mask(u, names))
		}
		return nil
	}
	counted := map[schema.GroupResource]bool{}
	typed := []struct {
		gr   schema.GroupResource
		list func() ([]runtime.Object, error)
	}{
		{schema.GroupResource{Resource: "pods"}, func() ([]runtime.Object, error) {
			l, err := rc.pods.Pods(q.Namespace).List(labels.Everything())
			return objects(l), err
		}},
		{schema.GroupResource{Resource: "services"}, func() ([]runtime.Object, error) {
			l, err := rc.services.Services(q.Namespace).List(labels.Everything())
			return objects(l), err
		}},
		{schema.GroupResource{Resource: "persistentvolumeclaims"}, func() ([]runtime.Object, error) {
			l, err := rc.claims.PersistentVolumeClaims(q.Namespace).List(labels.Everything())
			return objects(l), err
		}},
	}
	for _, t := range typed {
		counted[t.gr] = true
		if len(quota.For(t.gr).MatchingResources(names)) == 0 {
			continue
		}
		objs, err := t.list()
		if err != nil {
			return nil, err
		}
		if err := add(t.gr, objs); err != nil {
			return nil, err
		}
	}
	// Every other object count: count/<resource>[.<group>] and the
	// legacy names.
	for _, n := range names {
		gr, ok := quota.ParseCountName(n)
		if !ok {
			r, legacy := quota.LegacyCountResource(n)
			if !legacy {
				continue
			}
			gr = schema.GroupResource{Resource: r}
		}
		if counted[gr] {
			continue
		}
		counted[gr] = true
		if len(quota.ScopeSelectors(q)) > 0 {
			// Object counts are never in a scope.
			continue
		}
		count, err := rc.count(ctx, gr, q.Namespace)
		if err != nil {
			rc.logger.Debug("cannot count objects for quota", "resource", gr.String(), "err", err)
			continue
		}
		for _, cn := range quota.For(gr).MatchingResources(names) {
			used[cn] = *resource.NewQuantity(count, resource.DecimalSI)
		}
	}
	return used, nil
}

// count returns how many objects of gr namespace holds, listed as
// metadata only.
func (rc *Controller) count(ctx context.Context, gr schema.GroupResource, namespace string) (int64, error) {
	gvr, err := rc.mapper.ResourceFor(gr.WithVersion(""))
	if err != nil {
		rc.mapper.Reset()
		if gvr, err = rc.mapper.ResourceFor(gr.WithVersion("")); err != nil {
			return 0, err
		}
	}
	list, err := rc.meta.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return int64(len(list.Items)), nil
}

func objects[T runtime.Object](l []T) []runtime.Object {
	out := make([]runtime.Object, len(l))
	for i, o := range l {
		out[i] = o
	}
	return out
}
