package generic

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

const (
	fieldName      = "metadata.name"
	fieldNamespace = "metadata.namespace"
)

// predicate returns the selection predicate of options, or a 400
// BadRequest if the field selector names a field the resource does not
// support (kube's messages: resources without own field labels say which
// two fields are known).
func (e *Store) predicate(options *metainternalversion.ListOptions) (storage.SelectionPredicate, error) {
	label, field := labels.Everything(), fields.Everything()
	if options != nil && options.LabelSelector != nil {
		label = options.LabelSelector
	}
	if options != nil && options.FieldSelector != nil {
		field = options.FieldSelector
	}
	for _, r := range field.Requirements() {
		if r.Field == fieldName || r.Field == fieldNamespace || slices.Contains(e.FieldLabels, r.Field) {
			continue
		}
		if len(e.FieldLabels) == 0 {
			return storage.SelectionPredicate{}, apierrors.NewBadRequest(
				fmt.Sprintf("%q is not a known field selector: only %q, %q", r.Field, fieldName, fieldNamespace))
		}
		return storage.SelectionPredicate{}, apierrors.NewBadRequest("field label not supported: " + r.Field)
	}
	p := e.PredicateFunc(label, field)
	if options != nil {
		p.Limit = options.Limit
		p.Continue = options.Continue
		p.AllowWatchBookmarks = options.AllowWatchBookmarks
	}
	return p, nil
}

// scope narrows a request without a namespace to the one namespace a
// field selector requires, and returns the key to read: one object's when
// the selector names one (metadata.name=x), else the collection's.
func (e *Store) scope(ctx context.Context, p storage.SelectionPredicate) (context.Context, string, bool) {
	if p.Field != nil && e.NamespaceScoped() && request.NamespaceFrom(ctx) == "" {
		if ns, ok := p.Field.RequiresExactMatch(fieldNamespace); ok && len(validation.ValidateNamespaceName(ns, false)) == 0 {
			ctx = request.WithNamespace(ctx, ns)
		}
	}
	if p.Field != nil {
		if name, ok := p.Field.RequiresExactMatch(fieldName); ok {
			if key, err := e.KeyFunc(ctx, name); err == nil {
				return ctx, key, false
			}
		}
	}
	return ctx, e.KeyRootFunc(ctx), true
}

// List implements rest.Lister.
func (e *Store) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	p, err := e.predicate(options)
	if err != nil {
		return nil, err
	}
	opts := storage.ListOptions{Predicate: p}
	if options != nil {
		opts.ResourceVersion = options.ResourceVersion
		opts.ResourceVersionMatch = options.ResourceVersionMatch
	}
	ctx, key, recursive := e.scope(ctx, p)
	opts.Recursive = recursive
	list := e.NewListFunc()
	if err := e.Storage.GetList(ctx, key, opts, list); err != nil {
		return nil, interpret(err, e.qualifiedResource(ctx), "", "list")
	}
	return list, nil
}

// Watch implements rest.Watcher. Watches with allowWatchBookmarks get
// periodic progress BOOKMARKs too, as kube's watch cache sends them.
func (e *Store) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	p, err := e.predicate(options)
	if err != nil {
		return nil, err
	}
	p.Limit, p.Continue = 0, ""
	opts := storage.ListOptions{Predicate: p, ProgressNotify: p.AllowWatchBookmarks}
	if options != nil {
		opts.ResourceVersion = options.ResourceVersion
		opts.SendInitialEvents = options.SendInitialEvents
	}
	ctx, key, recursive := e.scope(ctx, p)
	opts.Recursive = recursive
	w, err := e.Storage.Watch(ctx, key, opts)
	if err != nil {
		return nil, interpret(err, e.qualifiedResource(ctx), "", "watch")
	}
	return w, nil
}

// WatchSharesObjects implements rest.SharedObjectWatcher: a watch served
// by this very store (not by a type embedding it, which may change the
// events' objects) may take shared, encode-once objects.
func (e *Store) WatchSharesObjects(w rest.Watcher) bool {
	s, ok := w.(*Store)
	return ok && s == e
}

// ListSharesObjects implements rest.SharedObjectLister: a list served by
// this very store (not by a type embedding it, which may change the
// list's items) may take the watch cache's shared, encode-once items.
func (e *Store) ListSharesObjects(l rest.Lister) bool {
	s, ok := l.(*Store)
	return ok && s == e
}

// GetSharesObjects implements rest.SharedObjectGetter: a get served by
// this very store (not by a type embedding it, which may change the
// object) may take the watch cache's shared, encode-once entry.
func (e *Store) GetSharesObjects(g rest.Getter) bool {
	s, ok := g.(*Store)
	return ok && s == e
}

// deleteCollectionPageSize is a variable for tests.
var deleteCollectionPageSize int64 = DefaultDeleteCollectionPageSize

// DeleteCollection implements rest.CollectionDeleter: it lists the
// selected objects (in pages, unless the request sets a limit: then only
// the first page) and deletes each with options, in DeleteCollectionWorkers
// parallel deletes. Objects deleted meanwhile are skipped. It answers the
// list of the objects it deleted (as listed), or the first error; it is
// not atomic: some objects may be deleted when it fails.
func (e *Store) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions,
	listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	return e.DeleteCollectionWith(ctx, e, deleteValidation, options, listOptions)
}

// DeleteCollectionWith is DeleteCollection deleting each object with
// deleter: a resource that wraps the store's Delete (to release what a
// deleted object held) deletes collections through its own Delete.
func (e *Store) DeleteCollectionWith(ctx context.Context, deleter rest.GracefulDeleter, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions,
	listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	if listOptions == nil {
		listOptions = &metainternalversion.ListOptions{}
	} else {
		listOptions = listOptions.DeepCopy()
	}
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	work := make(chan runtime.Object, max(2*e.DeleteCollectionWorkers, 256))
	var wg sync.WaitGroup
	var errOnce sync.Once
	var firstErr error
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		cancel(err)
	}
	for range e.DeleteCollectionWorkers {
		wg.Go(func() {
			for item := range work {
				if ctx.Err() != nil {
					continue // drain
				}
				m, err := meta.Accessor(item)
				if err != nil {
					fail(apierrors.NewInternalError(err))
					continue
				}
				ictx := ctx
				if e.NamespaceScoped() && m.GetNamespace() != "" {
					ictx = request.WithNamespace(ctx, m.GetNamespace())
				}
				if _, _, err := deleter.Delete(ictx, m.GetName(), deleteValidation, options.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
					fail(err)
				}
			}
		})
	}

	list, listErr := e.listAll(ctx, listOptions, work)
	close(work)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if listErr != nil {
		return nil, listErr
	}
	return list, nil
}

// listAll lists every page selected by listOptions (only one when it sets
// a limit), sends each item to work, and returns the list of all items.
func (e *Store) listAll(ctx context.Context, listOptions *metainternalversion.ListOptions, work chan<- runtime.Object) (runtime.Object, error) {
	hasLimit := listOptions.Limit > 0
	if !hasLimit {
		listOptions.Limit = deleteCollectionPageSize
	}
	var all []runtime.Object
	var first runtime.Object
	for {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		list, err := e.List(ctx, listOptions)
		if err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		for _, item := range items {
			select {
			case work <- item:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		if hasLimit {
			return list, nil
		}
		all = append(all, items...)
		if first == nil {
			first = list
		}
		lm, err := meta.ListAccessor(list)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if lm.GetContinue() == "" {
			if err := meta.SetList(first, all); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if fm, err := meta.ListAccessor(first); err == nil {
				fm.SetContinue("")
				fm.SetRemainingItemCount(nil)
			}
			return first, nil
		}
		listOptions.Continue = lm.GetContinue()
		listOptions.ResourceVersion = ""
		listOptions.ResourceVersionMatch = ""
	}
}
