package memory

import (
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// Defaults of [BackendConfig].
const (
	DefaultMaxObjectSize    = 3 * 1024 * 1024 / 2 // etcd's default request size limit
	DefaultWatchBufferSize  = 1024
	DefaultBookmarkInterval = time.Minute
	DefaultFreshWait        = 3 * time.Second
	DefaultCompaction       = 5 * time.Minute // kube-apiserver's --etcd-compaction-interval
)

// BackendConfig configures a [Backend]. The zero value works.
type BackendConfig struct {
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// MaxObjectSize is the largest encoded object accepted, in bytes; larger
	// ones fail with ErrCodeRequestTooLarge. Default DefaultMaxObjectSize.
	MaxObjectSize int
	// CompactionInterval: every interval, history is compacted at the
	// revision that was current one interval earlier (as kube-apiserver
	// compacts etcd), so at least one interval of history stays available.
	// Default DefaultCompaction; negative disables periodic compaction.
	CompactionInterval time.Duration
	// HistoryWindow, if > 0, bounds history to about that many revisions:
	// once more than twice as many are held, history older than the last
	// HistoryWindow revisions is compacted.
	HistoryWindow uint64
	// WatchBufferSize is how many undelivered events a watcher may hold
	// before it is terminated. Default DefaultWatchBufferSize.
	WatchBufferSize int
	// BookmarkInterval is how often watchers that asked for progress
	// notifications (ProgressNotify and AllowWatchBookmarks) get a BOOKMARK.
	// Default DefaultBookmarkInterval.
	BookmarkInterval time.Duration
	// FreshWait is how long a read asking for a revision newer than the
	// current one waits for it before failing with
	// ErrCodeTooLargeResourceVersion. Default DefaultFreshWait; negative
	// means no wait.
	FreshWait time.Duration
	// Metrics receives the LIST costs and object counts of the stores
	// whose Config names their resource; nil: none. (The memory backend
	// is not etcd: it records no etcd_* metrics.)
	Metrics *storagemetrics.Metrics
}

func (c BackendConfig) withDefaults() BackendConfig {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxObjectSize <= 0 {
		c.MaxObjectSize = DefaultMaxObjectSize
	}
	if c.WatchBufferSize <= 0 {
		c.WatchBufferSize = DefaultWatchBufferSize
	}
	if c.BookmarkInterval <= 0 {
		c.BookmarkInterval = DefaultBookmarkInterval
	}
	if c.CompactionInterval == 0 {
		c.CompactionInterval = DefaultCompaction
	}
	if c.FreshWait == 0 {
		c.FreshWait = DefaultFreshWait
	}
	if c.FreshWait < 0 {
		c.FreshWait = 0
	}
	return c
}

// Config configures the [Store] of one resource.
type Config struct {
	// Codec encodes objects for storage and decodes them on every read.
	Codec runtime.Codec
	// NewFunc returns an empty object of the resource (used for BOOKMARK
	// events and zero objects); NewListFunc an empty list.
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object
	// Backend is the shared backend the store lives on (one revision for all
	// its stores). If nil, New creates a private Backend from BackendConfig,
	// which Store.Close closes.
	Backend       *Backend
	BackendConfig BackendConfig
	// GroupResource and ResourcePrefix (its key prefix, e.g.
	// "/configmaps") name the resource stored, for the backend's metrics:
	// with both set, the store records its LIST costs and its object
	// count.
	GroupResource  schema.GroupResource
	ResourcePrefix string
	// CacheContinueTokens writes continue tokens in kube-apiserver's watch
	// cache form (start "/cm1\u0000" for a list of "/configmaps/ns1")
	// rather than its etcd3 store's ("cm1\u0000"): for a resource
	// kube-apiserver would serve from its watch cache, so that the tokens
	// are those it would give. See storage.ContinuePrefix.
	CacheContinueTokens bool
	// NoMetrics: the store records nothing in the backend's Metrics
	// (kapi's own data, no resource of kube-apiserver's).
	NoMetrics bool
}
