package etcd3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// DefaultPrefix is the default key prefix (kube's --etcd-prefix).
const DefaultPrefix = "/registry"

// MaxObjectSize is the largest encoded object stored, in bytes: etcd's
// default request limit (1.5 MiB), which kube-apiserver inherits.
const MaxObjectSize = 3 * 1024 * 1024 / 2

// Config configures a [Store].
type Config struct {
	// Prefix is prepended to every key (default DefaultPrefix).
	Prefix string
	// Codec encodes objects for etcd and decodes them back. Required.
	Codec runtime.Codec
	// NewFunc returns an empty object of the resource (used for watch
	// events and bookmarks). Required for Watch.
	NewFunc func() runtime.Object
	// NewListFunc returns an empty list of the resource.
	NewListFunc func() runtime.Object
	// Logger (default slog.Default()).
	Logger *slog.Logger
	// ProgressNotifyInterval is etcd's --watch-progress-notify-interval
	// (default DefaultProgressNotifyInterval, etcd's default). A watch with
	// bookmarks that hears nothing from etcd for that long sends a BOOKMARK
	// at the last revision it knows complete: etcd (>= 3.6) sends no
	// progress notification to a watch until the store's revision reaches
	// the watch's start revision, so an idle store would give none.
	ProgressNotifyInterval time.Duration
	// GroupResource is the resource stored (the group and resource labels
	// of the metrics).
	GroupResource schema.GroupResource
	// Metrics receives the etcd requests, events, LIST costs and decode
	// errors of the store; nil: none.
	Metrics *storagemetrics.Metrics
	// RequestMetricsOnly records only the store's etcd requests and decode
	// errors in Metrics (storagemetrics.Metrics.RequestsOnly): for kapi's
	// own data that is no kube-apiserver resource.
	RequestMetricsOnly bool
	// LocalReads makes the store's reads serializable: etcd answers them
	// from the member's applied state, without confirming through raft
	// (ReadIndex) that it still leads. Set it only when the client reaches
	// a single-member etcd (kapi's embedded one): every write there is
	// acknowledged after the member applied it, and no other member can
	// have newer data, so such a read is still linearizable and
	// resourceVersions mean what they mean on a linearizable read. On a
	// cluster of several members it would allow stale reads.
	LocalReads bool
}

// DefaultProgressNotifyInterval is etcd's default progress notification
// interval.
const DefaultProgressNotifyInterval = 10 * time.Minute

// Store is the etcd3 implementation of [storage.Interface]. It is safe for
// concurrent use.
type Store struct {
	client      *clientv3.Client
	codec       runtime.Codec
	newFunc     func() runtime.Object
	newListFunc func() runtime.Object
	pathPrefix  string // always ends in "/"
	logger      *slog.Logger
	progress    time.Duration
	metrics     *storagemetrics.Resource // nil: none
	streamKey   string                   // this Store's own etcd watch stream (see watchContext)
	localReads  bool                     // Config.LocalReads
	resource    schema.GroupResource     // Config.GroupResource, named by list read errors
	// revisionOpts are CurrentRevision's read options, made once (read
	// only: CurrentRevision runs for consistent gets).
	revisionOpts []clientv3.OpOption

	sizes     atomic.Pointer[sizeEstimator] // nil until EnableSizeEstimation
	sizesOnce sync.Once

	// leases are those of the keys written with a TTL (storage.WithTTL).
	leases leases
}

// streams numbers Stores, so that each has its own etcd watch stream.
var streams atomic.Uint64

var _ storage.Interface = (*Store)(nil)

// New returns a Store that keeps its objects in etcd through client. The
// client is shared, not owned: closing it is the caller's job.
func New(client *clientv3.Client, cfg Config) *Store {
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	// As kube: a prefix always starts with "/" and is used as a directory.
	p := path.Join("/", prefix)
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	progress := cfg.ProgressNotifyInterval
	if progress <= 0 {
		progress = DefaultProgressNotifyInterval
	}
	s := &Store{
		progress:    progress,
		client:      client,
		codec:       cfg.Codec,
		newFunc:     cfg.NewFunc,
		newListFunc: cfg.NewListFunc,
		pathPrefix:  p,
		logger:      logger,
		metrics:     storeMetrics(cfg),
		streamKey:   fmt.Sprintf("%d/%s", streams.Add(1), cfg.GroupResource),
		localReads:  cfg.LocalReads,
		resource:    cfg.GroupResource,
		leases:      leases{client: client, metrics: storeMetrics(cfg)},
	}
	s.revisionOpts = s.readOpts(clientv3.WithCountOnly())
	return s
}

// leaseOpts returns the options of a put made with ctx: the lease of
// its TTL (storage.WithTTL), if any, as upstream attaches such keys.
func (s *Store) leaseOpts(ctx context.Context) ([]clientv3.OpOption, error) {
	ttl := storage.TTL(ctx)
	if ttl == 0 {
		return nil, nil
	}
	id, err := s.leases.get(ctx, int64(ttl))
	if err != nil {
		return nil, interpretError(err, "")
	}
	return []clientv3.OpOption{clientv3.WithLease(id)}, nil
}

// storeMetrics returns the metrics the store records (nil: none).
func storeMetrics(cfg Config) *storagemetrics.Resource {
	if cfg.RequestMetricsOnly {
		return cfg.Metrics.RequestsOnly(cfg.GroupResource)
	}
	return cfg.Metrics.Resource(cfg.GroupResource)
}

// readOpts returns opts for a read, serializable with Config.LocalReads.
// It may append to opts.
func (s *Store) readOpts(opts ...clientv3.OpOption) []clientv3.OpOption {
	if s.localReads {
		return append(opts, clientv3.WithSerializable())
	}
	return opts
}

// prepareKey returns the etcd key of key, refusing keys that would escape
// the prefix.
func (s *Store) prepareKey(key string) (string, error) {
	switch {
	case key == "" || key == "/":
		return "", fmt.Errorf("etcd3: empty key %q", key)
	case key == ".." || strings.HasPrefix(key, "../") || strings.HasSuffix(key, "/..") || strings.Contains(key, "/../"),
		key == "." || strings.HasPrefix(key, "./") || strings.HasSuffix(key, "/.") || strings.Contains(key, "/./"):
		return "", fmt.Errorf("etcd3: invalid key %q", key)
	}
	return s.pathPrefix + strings.TrimPrefix(key, "/"), nil
}

// Get implements [storage.Interface].
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	k, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	minRV, err := storage.ParseRequestResourceVersion(key, opts.ResourceVersion)
	if err != nil {
		return err
	}
	start := time.Now()
	resp, err := s.client.Get(ctx, k, s.readOpts()...)
	s.metrics.EtcdRequest(storagemetrics.OpGet, start, err)
	if err != nil {
		return interpretError(err, key)
	}
	if err := checkMinRV(key, minRV, resp.Header.Revision); err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		if opts.IgnoreNotFound {
			return runtime.SetZeroValue(objPtr)
		}
		return storage.NewError(storage.ErrCodeKeyNotFound, key, 0, "")
	}
	kv := resp.Kvs[0]
	return storage.CorruptOnGet(s.decode(key, kv.Value, objPtr, kv.ModRevision))
}

// Create implements [storage.Interface].
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object) error {
	k, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		return storage.NewError(storage.ErrCodeInvalidObj, key, 0, err.Error())
	}
	if rv != 0 {
		return storage.NewError(storage.ErrCodeInvalidObj, key, 0, "resourceVersion should not be set on objects to be created")
	}
	data, err := s.encode(key, obj)
	if err != nil {
		return err
	}
	putOpts, err := s.leaseOpts(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(k), "=", 0)).
		Then(opPut(k, data, putOpts...)).
		Commit()
	s.metrics.EtcdRequest(storagemetrics.OpCreate, start, err)
	if err != nil {
		return interpretError(err, key)
	}
	if !resp.Succeeded {
		return storage.NewError(storage.ErrCodeKeyExists, key, 0, "")
	}
	if out == nil {
		return nil
	}
	return s.decode(key, data, out, resp.Header.Revision)
}

// CurrentRevision implements [storage.Interface]: the revision of a
// linearizable read made now (recorded as "getCurrentResourceVersion", as
// upstream's GetCurrentResourceVersion).
func (s *Store) CurrentRevision(ctx context.Context) (uint64, error) {
	start := time.Now()
	resp, err := s.client.Get(ctx, s.pathPrefix, s.revisionOpts...)
	s.metrics.EtcdRequest(storagemetrics.OpGetCurrentResourceVersion, start, err)
	if err != nil {
		return 0, interpretError(err, "")
	}
	return uint64(resp.Header.Revision), nil
}

// Count returns the number of objects stored under key (recursively), as
// upstream's Stats counts them ("listWithCount").
func (s *Store) Count(ctx context.Context, key string) (int64, error) {
	k, err := s.prepareKey(key)
	if err != nil {
		return 0, err
	}
	if !strings.HasSuffix(k, "/") {
		k += "/"
	}
	start := time.Now()
	resp, err := s.client.Get(ctx, k, s.readOpts(clientv3.WithPrefix(), clientv3.WithCountOnly())...)
	s.metrics.EtcdRequest(storagemetrics.OpListWithCount, start, err)
	if err != nil {
		return 0, interpretError(err, key)
	}
	return resp.Count, nil
}

// Compact discards etcd's history before rev (rev itself stays readable).
// Compacting at or below an earlier compaction is a no-op; a rev newer than
// the current revision is ErrCodeTooLargeResourceVersion. Compaction is
// global to the etcd cluster, not to this store's resource.
func (s *Store) Compact(ctx context.Context, rev uint64) error {
	return compact(ctx, s.client, int64(rev))
}

func compact(ctx context.Context, client *clientv3.Client, rev int64) error {
	_, err := client.Compact(ctx, rev)
	if err == nil {
		return nil
	}
	err = interpretError(err, "")
	if storage.HasCode(err, storage.ErrCodeExpired) {
		return nil // already compacted at or past rev
	}
	return fmt.Errorf("compact at revision %d: %w", rev, err)
}

// checkMinRV enforces "at least as new as minRV" against the revision etcd
// answered at.
func checkMinRV(key string, minRV uint64, current int64) error {
	if minRV > uint64(current) {
		return tooLargeRV(key, minRV, uint64(current))
	}
	return nil
}

func tooLargeRV(key string, rv, current uint64) error {
	return storage.NewError(storage.ErrCodeTooLargeResourceVersion, key, int64(rv),
		fmt.Sprintf("Too large resource version: %d, current: %d", rv, current))
}

// errContext reports whether err is a context error, which callers get
// unchanged.
func errContext(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
