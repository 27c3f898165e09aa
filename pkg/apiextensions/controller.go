package apiextensions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var errInstancesRemaining = errors.New("custom resources remaining")

// controller does the work of upstream's naming, establishing, finalizer
// and storedVersions controllers and of the CRD handler's informer: one
// worker syncs CRDs by name, fed by a watch on the CRD store, a periodic
// resync of the CRDs not yet settled, and retries. A cache of every CRD, kept from the list and the
// watch (and the controller's own writes), gives the names the other CRDs
// of a group hold.
//
// The order of a sync is what makes a CRD appear whole: its serving is
// prepared, its Established condition written, then its served versions
// and their discovery shown in one step (crServer). At start every stored
// established CRD is served in one batch before synced fires.
type controller struct {
	crds   *CRDREST
	status *generic.StatusREST
	// statusFields (nil: none) is the field manager of
	// customresourcedefinitions/status, for the status the controller
	// writes.
	statusFields handlers.FieldManager
	serving      *crServer
	resync       time.Duration
	synced       func()
	logger       *slog.Logger
	// openAPIMetrics (nil: none) follows the CRDs as upstream's OpenAPI
	// controllers do.
	openAPIMetrics *OpenAPIMetrics

	queue queue
	// retry holds the names to sync again, and when.
	retry map[string]time.Time

	cacheMu sync.Mutex
	cache   map[string]*apiextensionsv1.CustomResourceDefinition
	// cacheGroups holds cache by group, then name (cacheSetLocked and
	// cacheDeleteLocked keep both), so that naming a CRD reads its group
	// only.
	cacheGroups map[string]map[string]*apiextensionsv1.CustomResourceDefinition
}

// cacheSetLocked records crd in the cache; cacheMu is held.
func (c *controller) cacheSetLocked(crd *apiextensionsv1.CustomResourceDefinition) {
	c.cacheDeleteLocked(crd.Name)
	if c.cache == nil {
		c.cache = map[string]*apiextensionsv1.CustomResourceDefinition{}
	}
	c.cache[crd.Name] = crd
	if c.cacheGroups == nil {
		c.cacheGroups = map[string]map[string]*apiextensionsv1.CustomResourceDefinition{}
	}
	g := crd.Spec.Group
	if c.cacheGroups[g] == nil {
		c.cacheGroups[g] = map[string]*apiextensionsv1.CustomResourceDefinition{}
	}
	c.cacheGroups[g][crd.Name] = crd
}

// cacheDeleteLocked removes the CRD called name from the cache; cacheMu
// is held.
func (c *controller) cacheDeleteLocked(name string) {
	old := c.cache[name]
	if old == nil {
		return
	}
	delete(c.cache, name)
	g := old.Spec.Group
	delete(c.cacheGroups[g], name)
	if len(c.cacheGroups[g]) == 0 {
		delete(c.cacheGroups, g)
	}
}

// run serves every stored established CRD, fires synced, then syncs
// every CRD and follows changes until ctx ends.
func (c *controller) run(ctx context.Context) {
	c.queue.init()
	c.retry = map[string]time.Time{}
	c.cacheMu.Lock()
	c.cache, c.cacheGroups = nil, nil
	c.cacheMu.Unlock()
	var list *apiextensionsv1.CustomResourceDefinitionList
	for {
		var err error
		if list, err = c.list(ctx); err == nil {
			break
		}
		c.logger.Warn("list customresourcedefinitions", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	stored := c.serveStored(list.Items)
	c.openAPIMetrics.started(list.Items)
	c.synced()
	// The OpenAPI documents of the CRDs served at start come right
	// after: readiness does not wait for them (nor does upstream's).
	c.serving.publishOpenAPI(stored)
	for i := range list.Items {
		c.queue.add(list.Items[i].Name)
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.watch(ctx, list.ResourceVersion)
	}()
	defer wg.Wait()
	c.work(ctx)
}

// serveStored serves, in one step, every CRD of items that is
// established, as stored (the sync that follows brings each up to date),
// and returns the change for publishOpenAPI. A CRD that cannot be served
// is left to its sync, which retries.
func (c *controller) serveStored(items []apiextensionsv1.CustomResourceDefinition) *staged {
	start := time.Now()
	var ps []*prepared
	for i := range items {
		crd := &items[i]
		if !isConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		p, err := c.serving.prepare(crd)
		if err != nil {
			c.logger.Warn("serve stored customresourcedefinition", "crd", crd.Name, "err", err)
			continue
		}
		ps = append(ps, p)
	}
	st, err := c.serving.stage(ps...)
	if err == nil && st != nil {
		st.laterOpenAPI = true
		err = c.serving.activate(st)
	}
	if err != nil {
		c.logger.Warn("serve stored customresourcedefinitions", "err", err)
		return nil
	}
	c.logger.Info("stored customresourcedefinitions served", "count", len(ps), "duration", time.Since(start))
	return st
}

func systemContext(ctx context.Context, namespace string) context.Context {
	return request.WithNamespace(ctx, namespace)
}

// list lists every CRD and records them in the cache.
func (c *controller) list(ctx context.Context) (*apiextensionsv1.CustomResourceDefinitionList, error) {
	obj, err := c.crds.List(systemContext(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	l := obj.(*apiextensionsv1.CustomResourceDefinitionList)
	c.cacheList(l)
	return l, nil
}

// watch queues the name of every CRD that changes; a watch that ends is
// replaced after a list that queues every CRD.
func (c *controller) watch(ctx context.Context, rv string) {
	for ctx.Err() == nil {
		w, err := c.crds.Watch(systemContext(ctx, ""), &metainternalversion.ListOptions{ResourceVersion: rv, Watch: true})
		if err == nil {
			for ev := range w.ResultChan() {
				if crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition); ok {
					if ev.Type == watch.Deleted {
						c.forget(crd)
						c.openAPIMetrics.changed(crd.Name, nil)
					} else {
						c.observe(crd)
						c.openAPIMetrics.changed(crd.Name, crd)
					}
					c.queue.add(crd.Name)
				}
			}
			w.Stop()
		} else {
			c.logger.Debug("watch customresourcedefinitions", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		l, err := c.list(ctx)
		if err != nil {
			rv = ""
			continue
		}
		rv = l.ResourceVersion
		c.openAPIMetrics.relisted(l.Items)
		for i := range l.Items {
			c.queue.add(l.Items[i].Name)
		}
	}
}

// work syncs queued names until ctx ends.
func (c *controller) work(ctx context.Context) {
	resync := c.resync
	if resync <= 0 {
		resync = defaultResync
	}
	resyncTick := time.NewTicker(resync)
	defer resyncTick.Stop()
	retryTick := time.NewTicker(250 * time.Millisecond)
	defer retryTick.Stop()
	for {
		for name, ok := c.queue.pop(); ok && ctx.Err() == nil; name, ok = c.queue.pop() {
			c.syncOne(ctx, name)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.queue.wake:
		case now := <-retryTick.C:
			for name, at := range c.retry {
				if !now.Before(at) {
					delete(c.retry, name)
					c.queue.add(name)
				}
			}
		case <-resyncTick.C:
			for _, name := range c.unsettled() {
				c.queue.add(name)
			}
		}
	}
}

// defaultResync is how often the controller re-examines the CRDs it
// caches: upstream's apiextensions informers resync every 5 minutes.
const defaultResync = 5 * time.Minute

// unsettled are the cached CRDs a resync must sync again: those not
// established, being deleted, or not served as they are now. Established
// CRDs served as they are cost one comparison each and no storage read,
// so an idle server's work does not grow with its CRDs (watch events and
// retries do the rest).
func (c *controller) unsettled() []string {
	c.cacheMu.Lock()
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(c.cache))
	for _, crd := range c.cache {
		crds = append(crds, crd)
	}
	c.cacheMu.Unlock()
	var out []string
	for _, crd := range crds {
		if crd.DeletionTimestamp != nil || !isConditionTrue(crd, apiextensionsv1.Established) || !c.serving.servesAsIs(crd) {
			out = append(out, crd.Name)
		}
	}
	return out
}

func (c *controller) syncOne(ctx context.Context, name string) {
	err := c.sync(ctx, name)
	switch {
	case err == nil:
		delete(c.retry, name)
		return
	case ctx.Err() != nil:
		return
	case errors.Is(err, errInstancesRemaining):
		c.logger.Debug("custom resources remaining", "crd", name)
	case apierrors.IsConflict(err):
		c.logger.Debug("customresourcedefinition changed meanwhile", "crd", name)
	default:
		c.logger.Warn("sync customresourcedefinition", "crd", name, "err", err)
	}
	c.retry[name] = time.Now().Add(time.Second)
}

// sync brings the CRD called name to its desired state: accepted names
// and conditions, routes served, custom resources deleted when it is
// being deleted.
func (c *controller) sync(ctx context.Context, name string) error {
	obj, err := c.crds.Get(systemContext(ctx, ""), name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Gone: stop serving it and reconsider the names of its group.
		if err := c.serving.remove(name); err != nil {
			return err
		}
		_, group, _ := strings.Cut(name, ".")
		c.forgetName(name)
		c.queueGroup(group, name)
		return nil
	}
	if err != nil {
		return err
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	c.observe(crd)
	next := crd.DeepCopy()
	acceptNames(next, c.group(crd.Spec.Group))
	deleting := crd.DeletionTimestamp != nil && hasFinalizer(crd, cleanupFinalizer)
	if deleting {
		setCondition(next, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
		})
	}
	// Serving is prepared first and shown only once the status saying
	// Established is stored (requests for it wait meanwhile): a client
	// that finds a version served finds the CRD Established and every
	// other served version too, and one that finds the CRD Established
	// finds its resources (activation.go).
	var st *staged
	if isConditionTrue(next, apiextensionsv1.Established) {
		p, err := c.serving.prepare(next)
		if err != nil {
			return err
		}
		if st, err = c.serving.stage(p); err != nil {
			return err
		}
	} else if err := c.serving.remove(name); err != nil {
		return err
	}
	if !equality.Semantic.DeepEqual(next.Status, crd.Status) {
		c.serving.hold(st)
		out, _, err := c.status.Update(systemContext(ctx, ""), name, c.statusUpdate(next), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			c.serving.discard(st)
			return fmt.Errorf("update status: %w", err)
		}
		crd = out.(*apiextensionsv1.CustomResourceDefinition)
		c.observe(crd)
		if !equality.Semantic.DeepEqual(next.Status.AcceptedNames, obj.(*apiextensionsv1.CustomResourceDefinition).Status.AcceptedNames) {
			c.queueGroup(crd.Spec.Group, name)
		}
	}
	if err := c.serving.activate(st); err != nil {
		return err
	}
	if deleting {
		return c.finalize(ctx, crd)
	}
	return nil
}

// queueGroup queues the CRDs of group but skip.
func (c *controller) queueGroup(group, skip string) {
	for _, o := range c.group(group) {
		if o.Name != skip {
			c.queue.add(o.Name)
		}
	}
}

// group returns the cached CRDs of group (shallow copies: read only).
func (c *controller) group(group string) []apiextensionsv1.CustomResourceDefinition {
	c.cacheMu.Lock()
	defer c.cacheMu.Unlock()
	var out []apiextensionsv1.CustomResourceDefinition
	for _, crd := range c.cacheGroups[group] {
		out = append(out, *crd)
	}
	return out
}

// observe records crd in the cache unless the cache holds a later state
// of the name (resourceVersions are revisions of one store: comparable
// across objects).
func (c *controller) observe(crd *apiextensionsv1.CustomResourceDefinition) {
	c.cacheMu.Lock()
	defer c.cacheMu.Unlock()
	if old := c.cache[crd.Name]; old != nil && newerRV(old.ResourceVersion, crd.ResourceVersion) {
		return
	}
	c.cacheSetLocked(crd)
}

// forget removes a deleted crd from the cache unless the cache holds a
// later state of the name (a CRD of the same name created since).
func (c *controller) forget(crd *apiextensionsv1.CustomResourceDefinition) {
	c.cacheMu.Lock()
	defer c.cacheMu.Unlock()
	if old := c.cache[crd.Name]; old != nil && newerRV(old.ResourceVersion, crd.ResourceVersion) {
		return
	}
	c.cacheDeleteLocked(crd.Name)
}

// forgetName removes the CRD called name from the cache (storage says it
// is gone).
func (c *controller) forgetName(name string) {
	c.cacheMu.Lock()
	defer c.cacheMu.Unlock()
	c.cacheDeleteLocked(name)
}

// cacheList records a list: its items, and the absence of cached CRDs it
// does not hold unless they were seen after it was read.
func (c *controller) cacheList(l *apiextensionsv1.CustomResourceDefinitionList) {
	c.cacheMu.Lock()
	defer c.cacheMu.Unlock()
	listed := make(map[string]bool, len(l.Items))
	for i := range l.Items {
		crd := &l.Items[i]
		listed[crd.Name] = true
		if old := c.cache[crd.Name]; old != nil && newerRV(old.ResourceVersion, crd.ResourceVersion) {
			continue
		}
		c.cacheSetLocked(crd)
	}
	for name, crd := range c.cache {
		if !listed[name] && !newerRV(crd.ResourceVersion, l.ResourceVersion) {
			c.cacheDeleteLocked(name)
		}
	}
}

// newerRV reports whether resourceVersion a is later than b (both
// revisions; a malformed one is never newer).
func newerRV(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

// finalize deletes every custom resource of a deleted CRD, then removes
// its finalizer (which deletes it) and stops serving it.
func (c *controller) finalize(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	c.serving.setTerminating(crd.Name)
	if store := c.serving.storeFor(crd.Name); store != nil {
		remaining, err := deleteAll(ctx, store)
		if err != nil {
			return c.setTerminating(ctx, crd, "InstanceDeletionFailed", fmt.Sprintf("could not delete CustomResources: %v", err), err)
		}
		if remaining > 0 {
			return c.setTerminating(ctx, crd, "InstanceDeletionCheck",
				fmt.Sprintf("could not confirm zero CustomResources remaining: %d remaining", remaining), errInstancesRemaining)
		}
	}
	done := crd.DeepCopy()
	setCondition(done, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
		Reason: "InstanceDeletionCompleted", Message: "removed all instances",
	})
	if _, _, err := c.status.Update(systemContext(ctx, ""), crd.Name, c.statusUpdate(done), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	// Routes and discovery go before the CRD does, so a client that sees
	// it gone gets 404s (a failed update below serves it again on retry).
	if err := c.serving.remove(crd.Name); err != nil {
		return err
	}
	_, _, err := c.crds.Update(systemContext(ctx, ""), crd.Name, modifyCRD(func(cur *apiextensionsv1.CustomResourceDefinition) {
		cur.Finalizers = slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == cleanupFinalizer })
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	c.logger.Info("customresourcedefinition deleted", "crd", crd.Name)
	return nil
}

// setTerminating records why the deletion is not finished and returns
// cause.
func (c *controller) setTerminating(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, reason, msg string, cause error) error {
	next := crd.DeepCopy()
	setCondition(next, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue, Reason: reason, Message: msg,
	})
	if !equality.Semantic.DeepEqual(next.Status, crd.Status) {
		if _, _, err := c.status.Update(systemContext(ctx, ""), crd.Name, c.statusUpdate(next), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
			return errors.Join(cause, err)
		}
	}
	return cause
}

// deleteAll deletes every custom resource in store and returns how many
// remain (held by finalizers, or created meanwhile).
func deleteAll(ctx context.Context, store *crStore) (int, error) {
	list, err := store.List(systemContext(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return 0, err
	}
	for _, item := range list.(*unstructured.UnstructuredList).Items {
		if item.GetDeletionTimestamp() != nil {
			continue
		}
		_, _, err := store.Delete(systemContext(ctx, item.GetNamespace()), item.GetName(), rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("delete %s/%s: %w", item.GetNamespace(), item.GetName(), err)
		}
	}
	list, err = store.List(systemContext(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(list.(*unstructured.UnstructuredList).Items), nil
}

// acceptNames sets crd's accepted names and its NamesAccepted and
// Established conditions, against the names the CRDs of its group (all,
// crd included) have accepted, as upstream's naming and establishing
// controllers do together.
func acceptNames(crd *apiextensionsv1.CustomResourceDefinition, all []apiextensionsv1.CustomResourceDefinition) {
	resources, kinds := map[string]bool{}, map[string]bool{}
	for i := range all {
		o := &all[i]
		if o.Spec.Group != crd.Spec.Group {
			continue
		}
		n := o.Status.AcceptedNames
		if o.Name == crd.Name {
			n = crd.Status.AcceptedNames
		}
		for _, r := range append([]string{n.Plural, n.Singular}, n.ShortNames...) {
			resources[r] = true
		}
		kinds[n.Kind] = true
		kinds[n.ListKind] = true
	}
	want, have := crd.Spec.Names, crd.Status.AcceptedNames
	next := have
	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionUnknown}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	check := func(requested, accepted string, used map[string]bool) error {
		if requested == accepted || !used[requested] {
			return nil
		}
		return fmt.Errorf("%q is already in use", requested)
	}
	if err := check(want.Plural, have.Plural, resources); err != nil {
		conflict("PluralConflict", err)
	} else {
		next.Plural = want.Plural
	}
	if err := check(want.Singular, have.Singular, resources); err != nil {
		conflict("SingularConflict", err)
	} else {
		next.Singular = want.Singular
	}
	if !slices.Equal(want.ShortNames, have.ShortNames) {
		var errs []error
		for _, s := range want.ShortNames {
			if slices.Contains(have.ShortNames, s) {
				continue
			}
			if err := check(s, "", resources); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			conflict("ShortNamesConflict", joinErrors(errs))
		} else {
			next.ShortNames = want.ShortNames
		}
	}
	if err := check(want.Kind, have.Kind, kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		next.Kind = want.Kind
	}
	if err := check(want.ListKind, have.ListKind, kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		next.ListKind = want.ListKind
	}
	next.Categories = want.Categories
	if cond.Status == apiextensionsv1.ConditionUnknown {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"
	}
	crd.Status.AcceptedNames = next
	setCondition(crd, cond)

	established := findCondition(crd, apiextensionsv1.Established)
	switch {
	case established != nil && established.Status == apiextensionsv1.ConditionTrue:
		// Once established, a CRD stays so (it keeps its accepted names).
	case cond.Status == apiextensionsv1.ConditionTrue:
		setCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
			Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
		})
	default:
		setCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
			Reason: "NotAccepted", Message: "not all names are accepted",
		})
	}
}

// joinErrors formats errors as upstream's aggregate: "[a, b]" for several.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}

// updatedObject is an UpdatedObjectInfo that writes obj as it is: the
// update is conditional on obj's resourceVersion.
type updatedObject struct {
	obj runtime.Object
	// fields (nil: none) records the write in the object's managed fields
	// for manager.
	fields  handlers.FieldManager
	manager string
}

func (u updatedObject) Preconditions() *metav1.Preconditions { return nil }

func (u updatedObject) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	out := u.obj.DeepCopyObject()
	if u.fields != nil && old != nil {
		out = u.fields.UpdateNoErrors(old, out, u.manager)
	}
	return out, nil
}

// statusManager is the field manager upstream's CRD controllers write
// status as: their clients' user agent is kube-apiserver/<version>.
const statusManager = "kube-apiserver"

// statusUpdate writes crd as the CRD's new status, as upstream's naming,
// establishing, finalizing and non-structural-schema controllers do
// through /status: an Update by "kube-apiserver" on the status
// subresource in the CRD's managed fields.
func (c *controller) statusUpdate(crd *apiextensionsv1.CustomResourceDefinition) updatedObject {
	return updatedObject{obj: crd, fields: c.statusFields, manager: statusManager}
}

// modifyCRD is an UpdatedObjectInfo that applies fn to the current CRD.
type modifyCRD func(*apiextensionsv1.CustomResourceDefinition)

func (modifyCRD) Preconditions() *metav1.Preconditions { return nil }

func (m modifyCRD) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	crd, ok := old.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("expected a CustomResourceDefinition, got %T", old)
	}
	crd = crd.DeepCopy()
	m(crd)
	return crd, nil
}

// queue is a set of names to sync, in arrival order; wake is signalled
// when a name is added.
type queue struct {
	mu    sync.Mutex
	dirty map[string]bool
	order []string
	wake  chan struct{}
}

func (q *queue) init() {
	q.dirty = map[string]bool{}
	q.wake = make(chan struct{}, 1)
}

func (q *queue) add(name string) {
	q.mu.Lock()
	if !q.dirty[name] {
		q.dirty[name] = true
		q.order = append(q.order, name)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) pop() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.order) == 0 {
		return "", false
	}
	name := q.order[0]
	q.order = q.order[1:]
	delete(q.dirty, name)
	return name, true
}
