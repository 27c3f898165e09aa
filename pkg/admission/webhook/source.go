package webhook

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

// Source keeps the current webhooks of one kind of configuration, compiled
// ([Hook]), in name order as upstream sorts configurations.
type Source struct {
	lw      ListWatcher
	compile func(runtime.Object) []*Hook
	logger  *slog.Logger

	ready   chan struct{}
	once    sync.Once
	hooks   atomic.Pointer[[]*Hook]
	objects map[string]runtime.Object // by name; used by run only
}

// NewSource returns a source of the configurations lw holds; compile
// turns one configuration into its webhooks.
func NewSource(lw ListWatcher, compile func(runtime.Object) []*Hook, logger *slog.Logger) *Source {
	if logger == nil {
		logger = slog.Default()
	}
	return &Source{lw: lw, compile: compile, logger: logger, ready: make(chan struct{})}
}

// Run lists and watches the configurations until ctx ends.
func (s *Source) Run(ctx context.Context) {
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

func (s *Source) listAndWatch(ctx context.Context) error {
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
		}
	}
}

// publish compiles the current configurations, in name order.
func (s *Source) publish() {
	names := make([]string, 0, len(s.objects))
	for n := range s.objects {
		names = append(names, n)
	}
	sort.Strings(names)
	hooks := []*Hook{}
	for _, n := range names {
		hooks = append(hooks, s.compile(s.objects[n])...)
	}
	s.hooks.Store(&hooks)
	s.once.Do(func() { close(s.ready) })
}

// errNotReady is returned when the configurations were not listed in time.
var errNotReady = errors.New("not yet ready to handle request")

// Hooks returns the current webhooks, waiting for the first list up to
// ReadyTimeout (or ctx).
func (s *Source) Hooks(ctx context.Context) ([]*Hook, error) {
	if h := s.hooks.Load(); h != nil {
		return *h, nil
	}
	t := time.NewTimer(ReadyTimeout)
	defer t.Stop()
	select {
	case <-s.ready:
		return *s.hooks.Load(), nil
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, errNotReady
}
