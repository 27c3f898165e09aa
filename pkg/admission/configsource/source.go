package configsource

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ListWatcher is where configurations are read from (a generic.Store).
type ListWatcher interface {
	List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error)
}

// ReadyTimeout is how long a request waits for the first list of the
// configurations (upstream's plugins wait for their informers to sync).
var ReadyTimeout = 10 * time.Second

// Source keeps the current configurations of one kind, compiled (each
// object into zero or more T), in name order as upstream sorts
// configurations.
type Source[T any] struct {
	lw      ListWatcher
	compile func(runtime.Object) []T
	logger  *slog.Logger

	ready   chan struct{}
	once    sync.Once
	items   atomic.Pointer[[]T]
	objects map[string]runtime.Object // by name; used by Run only
	// OnChange, if set, is called (by Run's goroutine) with every object
	// added or modified; e.g. to write a status.
	OnChange func(ctx context.Context, obj runtime.Object)
}

// New returns a source of the configurations lw holds; compile turns one
// configuration into its items.
func New[T any](lw ListWatcher, compile func(runtime.Object) []T, logger *slog.Logger) *Source[T] {
	if logger == nil {
		logger = slog.Default()
	}
	return &Source[T]{lw: lw, compile: compile, logger: logger, ready: make(chan struct{})}
}

// Run lists and watches the configurations until ctx ends.
func (s *Source[T]) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := s.listAndWatch(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("admission webhook configurations: list/watch failed; retrying", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (s *Source[T]) listAndWatch(ctx context.Context) error {
	list, err := s.lw.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	s.objects = map[string]runtime.Object{}
	for _, o := range items {
		if m, err := meta.Accessor(o); err == nil {
			s.objects[m.GetName()] = o
		}
	}
	s.publish()
	if s.OnChange != nil {
		for _, o := range items {
			s.OnChange(ctx, o)
		}
	}
	w, err := s.lw.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: lm.GetResourceVersion(), Watch: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("watch closed")
			}
			m, err := meta.Accessor(ev.Object)
			switch {
			case ev.Type == watch.Error:
				return errors.New("watch error")
			case ev.Type == watch.Bookmark || err != nil:
				continue
			case ev.Type == watch.Deleted:
				delete(s.objects, m.GetName())
			default:
				s.objects[m.GetName()] = ev.Object
			}
			s.publish()
			if s.OnChange != nil && ev.Type != watch.Deleted {
				s.OnChange(ctx, ev.Object)
			}
		}
	}
}

// publish compiles the current configurations, in name order.
func (s *Source[T]) publish() {
	names := make([]string, 0, len(s.objects))
	for n := range s.objects {
		names = append(names, n)
	}
	sort.Strings(names)
	items := []T{}
	for _, n := range names {
		items = append(items, s.compile(s.objects[n])...)
	}
	s.items.Store(&items)
	s.once.Do(func() { close(s.ready) })
}

// ErrNotReady is returned when the configurations were not listed in
// time (upstream's message).
var ErrNotReady = errors.New("not yet ready to handle request")

// Empty reports, without waiting, that the first list is done and there
// are no items now.
func (s *Source[T]) Empty() bool {
	h := s.items.Load()
	return h != nil && len(*h) == 0
}

// Items returns the current items, waiting for the first list up to
// ReadyTimeout (or ctx).
func (s *Source[T]) Items(ctx context.Context) ([]T, error) {
	if h := s.items.Load(); h != nil {
		return *h, nil
	}
	t := time.NewTimer(ReadyTimeout)
	defer t.Stop()
	select {
	case <-s.ready:
		return *s.items.Load(), nil
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, ErrNotReady
}
