package apiextensions

import (
	"context"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// crStore is the generic store of one served version whose watches end
// when the CRD stops being served (deleted, or the version removed).
type crStore struct {
	*generic.Store
	watches *watchSet
	schema  *apiextensionsv1.JSONSchemaProps // structural schema, or nil
}

// Watch implements rest.Watcher.
func (s *crStore) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	ctx, done := s.watches.add(ctx)
	w, err := s.Store.Watch(ctx, options)
	if err != nil {
		done()
		return nil, err
	}
	return &trackedWatch{Interface: w, done: done}, nil
}

// WatchSharesObjects implements rest.SharedObjectWatcher: a watch of this
// very store passes the generic store's events through unchanged, so its
// objects may be the watch cache's shared, encode-once ones (without it,
// every custom-resource watcher deep-copied and encoded every event).
func (s *crStore) WatchSharesObjects(w rest.Watcher) bool {
	c, ok := w.(*crStore)
	return ok && c == s
}

// ListSharesObjects implements rest.SharedObjectLister: a list of this
// very store is the generic store's, unchanged, so its items may be the
// watch cache's shared, encode-once objects.
func (s *crStore) ListSharesObjects(l rest.Lister) bool {
	c, ok := l.(*crStore)
	return ok && c == s
}

// GetSharesObjects implements rest.SharedObjectGetter: a get of this very
// store is the generic store's, unchanged, so its object may be the watch
// cache's shared, encode-once entry.
func (s *crStore) GetSharesObjects(g rest.Getter) bool {
	c, ok := g.(*crStore)
	return ok && c == s
}

// Destroy implements rest.Storage: the storage is the serving's, which
// destroys it when the version goes.
func (s *crStore) Destroy() {}

type trackedWatch struct {
	watch.Interface
	done func()
}

func (w *trackedWatch) Stop() {
	w.Interface.Stop()
	w.done()
}

// Stream lets the watch handler read the tracked watch's events on its
// own goroutine when the watch can deliver them that way (the watch
// cache's can; see handlers.eventStreamer); false: use ResultChan.
func (w *trackedWatch) Stream(send func(watch.Event) bool, idle func() bool) bool {
	s, ok := w.Interface.(interface {
		Stream(send func(watch.Event) bool, idle func() bool) bool
	})
	return ok && s.Stream(send, idle)
}

// watchSet cancels the contexts of the watches it tracks when closed;
// watches started after that end at once.
type watchSet struct {
	mu      sync.Mutex
	closed  bool
	next    int
	cancels map[int]context.CancelFunc
}

func newWatchSet() *watchSet { return &watchSet{cancels: map[int]context.CancelFunc{}} }

// add derives a context that close cancels; done releases it.
func (s *watchSet) add(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		cancel()
		return ctx, func() {}
	}
	id := s.next
	s.next++
	s.cancels[id] = cancel
	return ctx, func() {
		cancel()
		s.mu.Lock()
		delete(s.cancels, id)
		s.mu.Unlock()
	}
}

// close ends every tracked watch.
func (s *watchSet) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, cancel := range s.cancels {
		cancel()
		delete(s.cancels, id)
	}
}
