package cacher

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// Defaults of [Config].
const (
	DefaultEventWindow    = 100
	DefaultMaxEventWindow = 16 * 1024
	// DefaultEventFreshness is how long events are kept even past
	// EventWindow (kube's watch cache keeps 75s of history).
	DefaultEventFreshness = 75 * time.Second
	DefaultWatcherBuffer  = 100
	// DefaultDispatchBudget is the most the dispatcher blocks on watchers
	// with full buffers before they lag (and catch up from the event
	// window on their own), and DefaultDispatchBudgetRefill how fast that
	// budget refills per second: kube's watch cache's 100ms and 50ms/s. A
	// stuck watcher delays the others at most once by it.
	DefaultDispatchBudget       = 100 * time.Millisecond
	DefaultDispatchBudgetRefill = 50 * time.Millisecond
	// DefaultBookmarkInterval is how often watchers that asked for progress
	// get a BOOKMARK (kube-apiserver sends them about once a minute).
	DefaultBookmarkInterval = time.Minute
	// DefaultConsistentReadWait bounds the wait for the cache to catch up
	// with the underlying store when it can be asked for progress; without
	// a ProgressRequester the default is DefaultConsistentReadWaitNoProgress.
	DefaultConsistentReadWait           = 3 * time.Second
	DefaultConsistentReadWaitNoProgress = 25 * time.Millisecond
	// DefaultSnapshotTTL is how long a snapshot serving the later pages
	// of a paginated list is kept (as long as kube keeps watch history);
	// DefaultMaxSnapshots how many are kept at most.
	DefaultSnapshotTTL  = 75 * time.Second
	DefaultMaxSnapshots = 64
	// DefaultReadyWait bounds the wait for the first list before a read is
	// sent to the underlying store.
	DefaultReadyWait = 3 * time.Second
	// DefaultWatchFailureRelist is how long the underlying watch may keep
	// failing at one revision before the cache lists again: client-go's
	// reflector's MaxInternalErrorRetryDuration, which kube-apiserver's
	// cacher sets to 30 s.
	DefaultWatchFailureRelist = 30 * time.Second
)

// Clock tells the time (k8s.io/utils/clock.PassiveClock fits).
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Config configures a [Cacher].
type Config struct {
	// Storage is the underlying store: the source of truth. Required.
	Storage storage.Interface
	// ResourcePrefix is the key prefix cached, recursively, e.g. "/pods".
	// Required.
	ResourcePrefix string
	// NewFunc returns an empty object of the resource (for bookmarks);
	// NewListFunc an empty list. Required.
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object
	// GetAttrs returns the labels and fields predicates are matched
	// against; computed once per stored object and event (the predicates'
	// own GetAttrs are not called). Default storage.DefaultAttrs.
	GetAttrs storage.AttrFunc
	// KeyFunc returns the storage key of an object. Default: ResourcePrefix
	// + "/" + namespace + "/" + name, or ResourcePrefix + "/" + name for
	// objects without a namespace.
	KeyFunc func(obj runtime.Object) (string, error)

	// EventWindow is the number of recent events always kept for resuming
	// watches (default DefaultEventWindow). The ring grows past it, up to
	// MaxEventWindow (default DefaultMaxEventWindow), while its oldest
	// events are younger than EventFreshness (default
	// DefaultEventFreshness; negative: never grow).
	EventWindow    int
	MaxEventWindow int
	EventFreshness time.Duration
	// WatcherBuffer is how many undelivered events a watcher may hold
	// (default DefaultWatcherBuffer). When it is full, the dispatcher waits
	// for it within a time budget of at most DispatchBudget (default
	// DefaultDispatchBudget; negative: no wait), refilled by
	// DispatchBudgetRefill per second (default DefaultDispatchBudgetRefill);
	// then the watcher catches up from the event window on its own, and is
	// terminated only if its next event has left the window.
	WatcherBuffer        int
	DispatchBudget       time.Duration
	DispatchBudgetRefill time.Duration
	// BookmarkInterval is how often watchers with ProgressNotify and
	// Predicate.AllowWatchBookmarks get a BOOKMARK (default
	// DefaultBookmarkInterval).
	BookmarkInterval time.Duration
	// ConsistentReadWait bounds how long a read waits for the cache to
	// reach a revision the underlying store already has, before it is
	// served by the underlying store. Default DefaultConsistentReadWait if
	// Storage is a ProgressRequester, else
	// DefaultConsistentReadWaitNoProgress; negative: no wait.
	ConsistentReadWait time.Duration
	// SnapshotTTL is how long the snapshot of a state that served a page
	// of a list is kept to serve the next pages (default
	// DefaultSnapshotTTL); at most MaxSnapshots are kept (default
	// DefaultMaxSnapshots). A continue token whose snapshot is gone is
	// served by the underlying store. The TTL must be shorter than the
	// underlying store's compaction interval: a snapshot answers for its
	// revisions even after the store compacted them (the cache learns of
	// compactions only from forgetBefore).
	SnapshotTTL  time.Duration
	MaxSnapshots int
	// ReadyWait bounds how long a request waits for the cache's first list
	// (default DefaultReadyWait); after it the request goes to the
	// underlying store.
	ReadyWait time.Duration
	// WatchFailureRelist: when the underlying watch has failed for this
	// long without the cache's revision moving (an event it cannot
	// decode, say an undecodable object's deletion), the cache relists
	// instead of watching again, as upstream's (default
	// DefaultWatchFailureRelist).
	WatchFailureRelist time.Duration
	// ConsistencyCheckPeriod, when positive, runs the cache's consistency
	// checker (kube-apiserver's DetectCacheInconsistency): the cache's
	// list is compared with the underlying store's at the same revision
	// a jittered period after New, then a jittered period after each
	// check ends (each wait between the period and 1.5 times it);
	// kube-apiserver's period is DefaultConsistencyCheckPeriod. A failed
	// check sends exact lists and continue tokens to the underlying store
	// until a check succeeds (see consistency.go). 0: no checker.
	ConsistencyCheckPeriod time.Duration
	// StoreContinueTokens makes the pages served from the cache carry
	// continue tokens in the underlying store's form (start "cm1\u0000")
	// rather than the watch cache's ("/cm1\u0000"): for a resource
	// kube-apiserver serves without a watch cache (events, by default), so
	// that the tokens are those it would give. See storage.ContinuePrefix.
	StoreContinueTokens bool

	// Clock (default the real clock) times the event window.
	Clock Clock
	// Logger (default slog.Default()).
	Logger *slog.Logger

	// GroupResource is the resource cached (the group and resource labels
	// of the metrics).
	GroupResource schema.GroupResource
	// Metrics receives the watch cache's metrics and its object count;
	// nil: none.
	Metrics *storagemetrics.Metrics
}

// Validate reports what is missing from cfg.
func (cfg Config) Validate() error {
	var errs []error
	if cfg.Storage == nil {
		errs = append(errs, errors.New("Storage is required"))
	}
	if cfg.ResourcePrefix == "" || cfg.ResourcePrefix == "/" {
		errs = append(errs, fmt.Errorf("ResourcePrefix %q: a non-root prefix is required", cfg.ResourcePrefix))
	}
	if cfg.NewFunc == nil {
		errs = append(errs, errors.New("NewFunc is required"))
	}
	if cfg.NewListFunc == nil {
		errs = append(errs, errors.New("NewListFunc is required"))
	}
	if cfg.MaxEventWindow > 0 && cfg.EventWindow > cfg.MaxEventWindow {
		errs = append(errs, fmt.Errorf("EventWindow %d is larger than MaxEventWindow %d", cfg.EventWindow, cfg.MaxEventWindow))
	}
	return errors.Join(errs...)
}

func (cfg Config) withDefaults() Config {
	cfg.ResourcePrefix = strings.TrimSuffix(cfg.ResourcePrefix, "/")
	if cfg.GetAttrs == nil {
		cfg.GetAttrs = storage.DefaultAttrs
	}
	if cfg.KeyFunc == nil {
		cfg.KeyFunc = namespacedKeyFunc(cfg.ResourcePrefix)
	}
	if cfg.EventWindow <= 0 {
		cfg.EventWindow = DefaultEventWindow
	}
	if cfg.MaxEventWindow <= 0 {
		cfg.MaxEventWindow = max(DefaultMaxEventWindow, cfg.EventWindow)
	}
	if cfg.EventFreshness == 0 {
		cfg.EventFreshness = DefaultEventFreshness
	}
	if cfg.WatcherBuffer <= 0 {
		cfg.WatcherBuffer = DefaultWatcherBuffer
	}
	if cfg.DispatchBudget == 0 {
		cfg.DispatchBudget = DefaultDispatchBudget
	}
	if cfg.DispatchBudget < 0 {
		cfg.DispatchBudget = 0
	}
	if cfg.DispatchBudgetRefill <= 0 {
		cfg.DispatchBudgetRefill = DefaultDispatchBudgetRefill
	}
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = DefaultBookmarkInterval
	}
	if cfg.ConsistentReadWait == 0 {
		cfg.ConsistentReadWait = DefaultConsistentReadWaitNoProgress
		if _, ok := cfg.Storage.(ProgressRequester); ok {
			cfg.ConsistentReadWait = DefaultConsistentReadWait
		}
	}
	if cfg.ConsistentReadWait < 0 {
		cfg.ConsistentReadWait = 0
	}
	if cfg.SnapshotTTL <= 0 {
		cfg.SnapshotTTL = DefaultSnapshotTTL
	}
	if cfg.MaxSnapshots <= 0 {
		cfg.MaxSnapshots = DefaultMaxSnapshots
	}
	if cfg.ReadyWait <= 0 {
		cfg.ReadyWait = DefaultReadyWait
	}
	if cfg.WatchFailureRelist <= 0 {
		cfg.WatchFailureRelist = DefaultWatchFailureRelist
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// namespacedKeyFunc is the default KeyFunc: prefix/namespace/name, or
// prefix/name for cluster-scoped objects.
func namespacedKeyFunc(prefix string) func(runtime.Object) (string, error) {
	return func(obj runtime.Object) (string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return "", fmt.Errorf("key of %T: %w", obj, err)
		}
		if m.GetName() == "" {
			return "", fmt.Errorf("key of %T: object has no name", obj)
		}
		if ns := m.GetNamespace(); ns != "" {
			return prefix + "/" + ns + "/" + m.GetName(), nil
		}
		return prefix + "/" + m.GetName(), nil
	}
}
