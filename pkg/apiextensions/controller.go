package apiextensions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var errInstancesRemaining = errors.New("custom resources remaining")

// controller does the work of upstream's naming, establishing, finalizer
// and storedVersions controllers and of the CRD handler's informer: one
// worker syncs CRDs by name, fed by a watch on the CRD store, a periodic
// resync and retries.
type controller struct {
	crds    *CRDREST
	status  *generic.StatusREST
	serving *crServer
	resync  time.Duration
	synced  func()
	logger  *slog.Logger

	queue queue
	// retry holds the names to sync again, and when.
	retry map[string]time.Time
}

// run syncs every stored CRD, fires synced, then follows changes until
// ctx ends.
func (c *controller) run(ctx context.Context) {
	c.queue.init()
	c.retry = map[string]time.Time{}
	var names []string
	var rv string
	for {
		var err error
		if names, rv, err = c.list(ctx); err == nil {
			break
		}
		c.logger.Warn("list customresourcedefinitions", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	for _, name := range names {
		c.syncOne(ctx, name)
	}
	c.synced()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.watch(ctx, rv)
	}()
	defer wg.Wait()
	c.work(ctx)
}

func systemContext(ctx context.Context, namespace string) context.Context {
	return request.WithNamespace(ctx, namespace)
}

// list returns the names of every CRD and the list's resourceVersion.
func (c *controller) list(ctx context.Context) ([]string, string, error) {
	obj, err := c.crds.List(systemContext(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	l := obj.(*apiextensionsv1.CustomResourceDefinitionList)
	names := make([]string, len(l.Items))
	for i := range l.Items {
		names[i] = l.Items[i].Name
	}
	return names, l.ResourceVersion, nil
}

// watch queues the name of every CRD that changes; a watch that ends is
// replaced after a list that queues every CRD.
func (c *controller) watch(ctx context.Context, rv string) {
	for ctx.Err() == nil {
		w, err := c.crds.Watch(systemContext(ctx, ""), &metainternalversion.ListOptions{ResourceVersion: rv, Watch: true})
		if err == nil {
			for ev := range w.ResultChan() {
				if crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition); ok {
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
		names, listRV, err := c.list(ctx)
		if err != nil {
			rv = ""
			continue
		}
		rv = listRV
		for _, n := range names {
			c.queue.add(n)
		}
	}
}

// work syncs queued names until ctx ends.
func (c *controller) work(ctx context.Context) {
	resync := c.resync
	if resync <= 0 {
		resync = 30 * time.Second
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
			if names, _, err := c.list(ctx); err == nil {
				for _, n := range names {
					c.queue.add(n)
				}
			}
		}
	}
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
		return c.queueGroup(ctx, group, name)
	}
	if err != nil {
		return err
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	all, err := c.crds.List(systemContext(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return err
	}
	next := crd.DeepCopy()
	acceptNames(next, all.(*apiextensionsv1.CustomResourceDefinitionList).Items)
	deleting := crd.DeletionTimestamp != nil && hasFinalizer(crd, cleanupFinalizer)
	if deleting {
		setCondition(next, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
		})
	}
	// Routes first: a client that sees Established can use them.
	if isConditionTrue(next, apiextensionsv1.Established) {
		if err := c.serving.serve(next); err != nil {
			return err
		}
	} else if err := c.serving.remove(name); err != nil {
		return err
	}
	if !equality.Semantic.DeepEqual(next.Status, crd.Status) {
		out, _, err := c.status.Update(systemContext(ctx, ""), name, updatedObject{next}, rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("update status: %w", err)
		}
		crd = out.(*apiextensionsv1.CustomResourceDefinition)
		if !equality.Semantic.DeepEqual(next.Status.AcceptedNames, obj.(*apiextensionsv1.CustomResourceDefinition).Status.AcceptedNames) {
			if err := c.queueGroup(ctx, crd.Spec.Group, name); err != nil {
				return err
			}
		}
	}
	if deleting {
		return c.finalize(ctx, crd)
	}
	return nil
}

// queueGroup queues the CRDs of group but skip.
func (c *controller) queueGroup(ctx context.Context, group, skip string) error {
	all, err := c.crds.List(systemContext(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return err
	}
	for _, o := range all.(*apiextensionsv1.CustomResourceDefinitionList).Items {
		if o.Spec.Group == group && o.Name != skip {
			c.queue.add(o.Name)
		}
	}
	return nil
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
	if _, _, err := c.status.Update(systemContext(ctx, ""), crd.Name, updatedObject{done}, rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
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
		if _, _, err := c.status.Update(systemContext(ctx, ""), crd.Name, updatedObject{next}, rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
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
type updatedObject struct{ obj runtime.Object }

func (u updatedObject) Preconditions() *metav1.Preconditions { return nil }

func (u updatedObject) UpdatedObject(context.Context, runtime.Object) (runtime.Object, error) {
	return u.obj.DeepCopyObject(), nil
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
