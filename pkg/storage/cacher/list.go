package cacher

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// GetList implements [storage.Interface]. Lists with resourceVersion "0",
// "N" NotOlderThan and consistent lists without a limit are served from
// memory (Limit is ignored for the first two, as kube's watch cache does);
// Exact lists, continue tokens and paginated consistent lists go to the
// underlying store, as does any list the cache cannot serve in time.
func (c *Cacher) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("list %q: %w", key, err)
	}
	if _, err := storage.ValidateListOptions(key, opts); err != nil {
		return err
	}
	if !c.listFromCache(key, opts) {
		return c.listThrough(ctx, key, opts, listObj)
	}
	// A consistent read counts whether it succeeded and whether it fell
	// back to the underlying store.
	consistent := opts.ResourceVersion == ""
	need, known := uint64(0), false
	if consistent {
		cur, err := c.store.CurrentRevision(ctx)
		if err != nil {
			c.metrics.ConsistentRead(false, false)
			return fmt.Errorf("list %q: %w", key, err)
		}
		need, known = cur, true
	} else {
		need, _ = storage.ParseResourceVersion(opts.ResourceVersion) // checked by listFromCache
	}
	ok, err := c.waitFresh(ctx, need, known)
	if err != nil {
		if consistent {
			c.metrics.ConsistentRead(false, false)
		}
		return fmt.Errorf("list %q: %w", key, err)
	}
	if !ok {
		err := c.listThrough(ctx, key, opts, listObj)
		if consistent {
			c.metrics.ConsistentRead(err == nil, true)
		}
		return err
	}

	c.stats.listsCached.Add(1)
	w := cacheWatcher{key: key, prefix: scopePrefix(key), recursive: opts.Recursive, pred: opts.Predicate, all: opts.Predicate.Empty()}
	var matched []*entry
	fetched := 0
	c.mu.RLock()
	rv := c.rv
	if opts.Recursive {
		c.objects.scan(w.prefix, func(e *entry) {
			fetched++
			if w.matches(e) {
				matched = append(matched, e)
			}
		})
	} else if e := c.objects.get(key); e != nil {
		fetched = 1
		if w.matches(e) {
			matched = []*entry{e}
		}
	}
	c.mu.RUnlock()
	c.metrics.List(fetched, len(matched))
	if consistent {
		c.metrics.ConsistentRead(true, false)
	}

	items := make([]runtime.Object, len(matched))
	for i, e := range matched {
		items[i] = e.obj.DeepCopyObject()
	}
	if err := meta.SetList(listObj, items); err != nil {
		return fmt.Errorf("list %q: %w", key, err)
	}
	if err := storage.SetListResourceVersion(listObj, rv, "", nil); err != nil {
		return fmt.Errorf("list %q: %w", key, err)
	}
	return nil
}

func (c *Cacher) listThrough(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	c.stats.listsDelegated.Add(1)
	return c.store.GetList(ctx, key, opts, listObj)
}

// listFromCache reports whether a list may be served from memory (if the
// cache is ready and fresh enough).
func (c *Cacher) listFromCache(key string, opts storage.ListOptions) bool {
	if !c.covers(key, opts.Recursive) || opts.Predicate.Continue != "" {
		return false
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return false // cannot happen: GetList validated it
	}
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchNotOlderThan:
		return opts.ResourceVersion != ""
	case "":
		switch {
		case opts.ResourceVersion == "":
			// Consistent: paginated ones keep the store's snapshots.
			return opts.Predicate.Limit <= 0
		case rv > 0 && opts.Predicate.Limit > 0:
			return false // legacy: a paginated list at N is Exact
		}
		return true
	}
	return false // Exact, or invalid: the underlying store's
}

// errorEvent is the ERROR event that ends a watch after err.
func errorEvent(err error) watch.Event {
	st := apierrors.NewInternalError(err).Status()
	return watch.Event{Type: watch.Error, Object: &st}
}
