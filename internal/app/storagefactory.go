package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server/options"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacher"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// StorageFactory returns how each resource gets its storage, built-in and
// custom alike. On etcd (embedded or external), a resource's store sits
// behind a watch cache and encodes objects with the config's codec, by
// default protobuf in the storage version (as kube-apiserver stores
// built-in types), JSON for APIServices (as its aggregator stores them:
// etcdCodec); custom resources bring the CRD server's JSON codec. On
// the memory backend, the same codecs with no cache (the memory store
// serves watches itself).
func (c *Config) StorageFactory() generic.StorageFactory {
	if c.storage.memory != nil {
		return memoryStorage(generic.MemoryStorage(c.storage.memory), c.Options.WatchCache)
	}
	client := c.storage.client
	prefix := c.Options.Storage.Prefix
	logger := c.Logger
	m := c.StorageMetrics
	wc := c.Options.WatchCache
	compaction := c.Options.Storage.CompactionInterval
	localReads := c.storage.localReads
	return func(cfg generic.StorageConfig) (storage.Interface, func(), error) {
		codec := cfg.Codec
		if codec == nil {
			var err error
			if codec, err = etcdCodec(cfg); err != nil {
				return nil, nil, err
			}
		}
		return etcdWithCache(client, prefix, localReads, logger, m, cfg, codec, watchCacheTuning(wc, cfg.Resource, compaction), kubeCaches(wc, cfg.Resource))
	}
}

// watchCacheTuning applies the watch cache flags to one resource's cache
// config; nil: the resource has no watch cache.
func watchCacheTuning(o *options.WatchCacheOptions, resource schema.GroupResource, compaction time.Duration) func(*cacher.Config) {
	if o == nil {
		return func(cfg *cacher.Config) { cfg.ConsistencyCheckPeriod = cacher.DefaultConsistencyCheckPeriod }
	}
	size := o.Size(resource)
	if size == 0 {
		return nil
	}
	return func(cfg *cacher.Config) {
		cfg.EventWindow, cfg.MaxEventWindow = size, max(size, o.MaxEvents)
		// A snapshot must not outlive the revisions it answers for: etcd
		// keeps at least one compaction interval of history.
		if compaction > 0 {
			cfg.SnapshotTTL = min(cacher.DefaultSnapshotTTL, compaction/2)
		}
		cfg.ConsistencyCheckPeriod = cacher.DefaultConsistencyCheckPeriod
		if o.ConsistencyCheckPeriod != 0 {
			cfg.ConsistencyCheckPeriod = max(o.ConsistencyCheckPeriod, 0)
		}
	}
}

// kubeCaches reports whether kube-apiserver would serve resource from its
// watch cache with these flags (nil: the defaults).
func kubeCaches(o *options.WatchCacheOptions, resource schema.GroupResource) bool {
	if o == nil {
		o = options.NewWatchCacheOptions()
	}
	return o.KubeCaches(resource)
}

// etcdWithCache is one resource's etcd3 store behind its watch cache
// (tune nil: without one). kubeCached tells whether kube-apiserver would
// cache the resource too: if not, the cache's pages carry the store's
// form of continue tokens, as kube-apiserver's would.
func etcdWithCache(client *clientv3.Client, prefix string, localReads bool, logger *slog.Logger, m *storagemetrics.Metrics, cfg generic.StorageConfig, codec runtime.Codec, tune func(*cacher.Config), kubeCached bool) (storage.Interface, func(), error) {
	store := etcd3.New(client, etcd3.Config{
		Prefix:             prefix,
		Codec:              codec,
		NewFunc:            cfg.NewFunc,
		NewListFunc:        cfg.NewListFunc,
		Logger:             logger,
		GroupResource:      cfg.Resource,
		Metrics:            m,
		RequestMetricsOnly: cfg.Internal,
		LocalReads:         localReads,
	})
	// kapi's internal stores (cfg.Internal) keep their watch cache, which
	// reports nothing: kube-apiserver keeps that data in plain etcd
	// storage, with only its etcd requests counted.
	cacheMetrics := m
	if cfg.Internal {
		cacheMetrics = nil
	}
	if tune == nil {
		if cfg.Internal {
			return store, nil, nil
		}
		return store, trackUncached(m, cfg, store), nil
	}
	ccfg := cacher.Config{
		Storage:        store,
		ResourcePrefix: cfg.Prefix,
		NewFunc:        cfg.NewFunc,
		NewListFunc:    cfg.NewListFunc,
		GetAttrs:       cfg.GetAttrs,
		Logger:         logger.With("resource", cfg.Resource.String()),
		GroupResource:  cfg.Resource,
		Metrics:        cacheMetrics,
		// The pages kube-apiserver serves from etcd carry the store's
		// form of token.
		StoreContinueTokens: !kubeCached,
	}
	tune(&ccfg)
	if !kubeCached || cfg.Internal {
		// kube-apiserver checks the watch caches it has (its
		// DetectCacheInconsistency), not kapi's own.
		ccfg.ConsistencyCheckPeriod = 0
	}
	cache, err := cacher.New(ccfg)
	if err != nil {
		return nil, nil, fmt.Errorf("watch cache for %s: %w", cfg.Resource, err)
	}
	return cache, cache.Stop, nil
}

// trackUncached reports the object count and size estimate of a resource
// without a watch cache (events, by default), as upstream's registry polls
// them from its etcd store: the count is etcd's; with no watch cache to
// enable its size estimator the average size is unknown, so the estimate
// is 0 without objects and -1 with some (upstream's rule). Both are read
// at scrape time, as the watch cache's are. The returned function stops
// the tracking.
func trackUncached(m *storagemetrics.Metrics, cfg generic.StorageConfig, store *etcd3.Store) func() {
	res := m.Resource(cfg.Resource)
	count := func(ctx context.Context) (int64, error) { return store.Count(ctx, cfg.Prefix) }
	untrackObjects := res.TrackObjects(count)
	untrackSize := res.TrackSize(func(ctx context.Context) (int64, error) {
		n, err := count(ctx)
		if err != nil || n == 0 {
			return 0, err
		}
		return -1, nil
	})
	return func() { untrackObjects(); untrackSize() }
}

// memoryStorage stores built-in types as protobuf on the memory backend
// too: the stored bytes are never seen outside the process, and every
// create, update, get and watcher decodes them (JSON decoding was ~12% of
// a start's CPU, protobuf decodes several times faster).
//
// The memory store writes continue tokens in the form kube-apiserver's
// layer would: its watch cache's for the resources it caches.
func memoryStorage(f generic.StorageFactory, wc *options.WatchCacheOptions) generic.StorageFactory {
	return func(cfg generic.StorageConfig) (storage.Interface, func(), error) {
		cfg.WatchCached = kubeCaches(wc, cfg.Resource)
		if cfg.Codec == nil {
			codec, err := protobufCodec(cfg)
			if err != nil {
				return nil, nil, err
			}
			cfg.Codec = codec
		}
		return f(cfg)
	}
}

// etcdCodec is how a built-in resource is stored in etcd: protobuf in its
// storage version, as kube-apiserver stores built-in types, but for the
// aggregator's resources (apiregistration.k8s.io APIServices), which
// kube-apiserver's aggregator stores with its scheme's legacy codec:
// JSON. Either codec reads both encodings (the universal decoder), so
// etcd data written by an older kapi (protobuf APIServices) or by
// kube-apiserver still reads. The memory backend keeps protobuf for all:
// its bytes are never seen outside the process (see memoryStorage).
func etcdCodec(cfg generic.StorageConfig) (runtime.Codec, error) {
	if cfg.Resource.Group == apiregistrationv1.GroupName {
		return jsonCodec(cfg)
	}
	return protobufCodec(cfg)
}

// jsonCodec encodes objects as compact JSON (with the serializer's
// trailing newline, as kube-apiserver's legacy codec writes them) in the
// resource's storage version.
func jsonCodec(cfg generic.StorageConfig) (runtime.Codec, error) {
	return storageCodec(cfg, runtime.ContentTypeJSON)
}

// protobufCodec encodes objects as protobuf in the resource's storage
// version, as kube-apiserver stores built-in types.
func protobufCodec(cfg generic.StorageConfig) (runtime.Codec, error) {
	return storageCodec(cfg, runtime.ContentTypeProtobuf)
}

// storageCodec encodes objects with the scheme's serializer of mediaType
// in the resource's storage version and decodes any encoding the scheme
// knows (the universal decoder) into it.
func storageCodec(cfg generic.StorageConfig, mediaType string) (runtime.Codec, error) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, fmt.Errorf("no %s serializer for %s", mediaType, cfg.Resource)
	}
	gv := cfg.StorageVersion
	return scheme.Codecs.CodecForVersions(info.Serializer, scheme.Codecs.UniversalDecoder(gv), gv, gv), nil
}
