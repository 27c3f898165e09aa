package aggregator

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/watch"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
)

// informer is an in-memory copy of every APIService, kept by a list and a
// watch of the store, with change notifications. Objects it hands out
// are shared: read them, never change them.
type informer struct {
	store   *generic.Store
	logger  *slog.Logger
	observe func(*apiregistrationv1.APIService) // called on every object seen
	// removed, optional, is called with the name of every APIService
	// that is gone (deleted, or missing from a new list).
	removed func(name string)

	mu     sync.Mutex
	items  map[string]*apiregistrationv1.APIService
	subs   []chan struct{}
	named  []*namedChanges
	synced chan struct{}
	once   sync.Once
}

func newInformer(store *generic.Store, logger *slog.Logger, observe func(*apiregistrationv1.APIService)) *informer {
	return &informer{store: store, logger: logger, observe: observe, items: map[string]*apiregistrationv1.APIService{}, synced: make(chan struct{})}
}

// subscribe returns a channel that receives after every change (one
// pending value at most). Subscribe before run.
func (i *informer) subscribe() <-chan struct{} {
	ch := make(chan struct{}, 1)
	i.mu.Lock()
	defer i.mu.Unlock()
	i.subs = append(i.subs, ch)
	return ch
}

// namedChanges are the names of the APIServices changed since a
// subscriber's last take; all after a list (any may have changed).
type namedChanges struct {
	names map[string]bool
	all   bool
}

// subscribeNames is subscribe that also says what changed: take returns
// the names of the APIServices added, changed or deleted since the last
// take, or all (true) when a list replaced the items. Subscribe before
// run.
func (i *informer) subscribeNames() (changed <-chan struct{}, take func() (names map[string]bool, all bool)) {
	ch := i.subscribe()
	n := &namedChanges{}
	i.mu.Lock()
	i.named = append(i.named, n)
	i.mu.Unlock()
	return ch, func() (map[string]bool, bool) {
		i.mu.Lock()
		defer i.mu.Unlock()
		names, all := n.names, n.all
		n.names, n.all = nil, false
		return names, all
	}
}

// changedLocked records a change of name (all: of every item) for the
// name subscribers; i.mu is held.
func (i *informer) changedLocked(name string, all bool) {
	for _, n := range i.named {
		if all {
			n.all = true
			continue
		}
		if n.names == nil {
			n.names = map[string]bool{}
		}
		n.names[name] = true
	}
}

// hasSynced is closed once the first list is in.
func (i *informer) hasSynced() <-chan struct{} { return i.synced }

// waitSynced waits for the first list; false if ctx ended first.
func (i *informer) waitSynced(ctx context.Context) bool {
	select {
	case <-i.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

// list returns every APIService, sorted by name.
func (i *informer) list() []*apiregistrationv1.APIService {
	i.mu.Lock()
	defer i.mu.Unlock()
	out := make([]*apiregistrationv1.APIService, 0, len(i.items))
	for _, s := range i.items {
		out = append(out, s)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// get returns the APIService name, or nil.
func (i *informer) get(name string) *apiregistrationv1.APIService {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.items[name]
}

// run lists, then watches, until ctx ends; a watch that ends is replaced
// after a new list.
func (i *informer) run(ctx context.Context) {
	for ctx.Err() == nil {
		rv, err := i.relist(ctx)
		if err != nil {
			i.logger.Warn("list apiservices", "err", err)
			sleep(ctx, time.Second)
			continue
		}
		i.once.Do(func() { close(i.synced) })
		i.watch(ctx, rv)
		sleep(ctx, 100*time.Millisecond)
	}
}

func (i *informer) relist(ctx context.Context) (string, error) {
	obj, err := i.store.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return "", err
	}
	l := obj.(*apiregistrationv1.APIServiceList)
	items := make(map[string]*apiregistrationv1.APIService, len(l.Items))
	for k := range l.Items {
		s := &l.Items[k]
		items[s.Name] = s
		i.observe(s)
	}
	i.mu.Lock()
	old := i.items
	i.items = items
	i.changedLocked("", true)
	i.mu.Unlock()
	if i.removed != nil {
		for name := range old {
			if items[name] == nil {
				i.removed(name)
			}
		}
	}
	i.notify()
	return l.ResourceVersion, nil
}

func (i *informer) watch(ctx context.Context, rv string) {
	w, err := i.store.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: rv, Watch: true})
	if err != nil {
		i.logger.Debug("watch apiservices", "err", err)
		return
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			s, isSvc := ev.Object.(*apiregistrationv1.APIService)
			switch {
			case ev.Type == watch.Error:
				return
			case !isSvc:
				continue
			case ev.Type == watch.Deleted:
				i.mu.Lock()
				delete(i.items, s.Name)
				i.changedLocked(s.Name, false)
				i.mu.Unlock()
				if i.removed != nil {
					i.removed(s.Name)
				}
			case ev.Type == watch.Added, ev.Type == watch.Modified:
				i.observe(s)
				i.mu.Lock()
				i.items[s.Name] = s
				i.changedLocked(s.Name, false)
				i.mu.Unlock()
			default:
				continue
			}
			i.notify()
		}
	}
}

func (i *informer) notify() {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, ch := range i.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
