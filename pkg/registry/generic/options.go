package generic

import (
	"errors"
	"fmt"
	"log/slog"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// StorageConfig describes the storage of one resource, for a
// [StorageFactory]. Built-in resources and custom resources use the same
// config; they differ in Codec.
type StorageConfig struct {
	// Resource is the resource stored, e.g. {"", "configmaps"}.
	Resource schema.GroupResource
	// StorageVersion is the group-version objects are stored as (e.g.
	// core/v1 for events served in both core/v1 and events.k8s.io/v1).
	StorageVersion schema.GroupVersion
	// Prefix is the key prefix of the resource, e.g. "/configmaps"
	// (without the backend's own prefix).
	Prefix string
	// Codec encodes objects for storage and decodes them on every read.
	// Nil means the factory's codec for built-in types (those of
	// pkg/api/scheme) in StorageVersion; custom resources set their own
	// (JSON in the CRD's storage version, decoded as the served version).
	Codec runtime.Codec
	// NewFunc returns an empty object; NewListFunc an empty list.
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object
	// GetAttrs returns the labels and fields selectors match (a watch
	// cache in front of the backend must use it).
	GetAttrs storage.AttrFunc
	// WatchCached tells that kube-apiserver would serve the resource from
	// its watch cache (with the watch cache flags given): the memory
	// backend then writes continue tokens in the cache's form.
	WatchCached bool
	// Internal marks storage of kapi's own data that is no resource of
	// kube-apiserver's (the API server leases, the NodePort allocations):
	// it keeps its watch cache (its users list and watch it), but neither
	// the cache nor the store report the resource in the per-resource
	// storage metrics (object count, size estimate, storage lists, watch
	// cache families, etcd events and bookmarks) that kube-apiserver,
	// which keeps such data in plain etcd storage without a cache or a
	// registry, has no series of. Its etcd requests are still counted
	// (etcd_request_*), as upstream's plain storage counts them.
	Internal bool
}

// StorageFactory makes the storage of one resource (a backend store,
// possibly behind a watch cache) and the function that releases it (nil
// if nothing is to be released). It is called once per resource (once per
// served version for custom resources), and may be called concurrently.
type StorageFactory func(cfg StorageConfig) (storage.Interface, func(), error)

// RESTOptions are what every resource's NewREST needs (upstream's
// generic.RESTOptions, reduced to what kapi uses).
type RESTOptions struct {
	// Storage makes each resource's storage. Required.
	Storage StorageFactory
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// NewStorage validates o and calls its factory for cfg.
func (o RESTOptions) NewStorage(cfg StorageConfig) (storage.Interface, func(), error) {
	if o.Storage == nil {
		return nil, nil, errors.New("registry options: Storage is required")
	}
	s, destroy, err := o.Storage(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("storage for %s: %w", cfg.Resource, err)
	}
	return s, destroy, nil
}

// Log returns the logger, defaulted.
func (o RESTOptions) Log() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

// MemoryStorage is a StorageFactory on a shared memory backend: each
// resource gets a store on b (no watch cache) that encodes objects with
// the config's Codec, by default as JSON in their storage version. b is
// the caller's to close.
func MemoryStorage(b *memory.Backend) StorageFactory {
	return func(cfg StorageConfig) (storage.Interface, func(), error) {
		if b == nil {
			return nil, nil, errors.New("memory backend is nil")
		}
		codec := cfg.Codec
		if codec == nil {
			codec = scheme.Codecs.LegacyCodec(cfg.StorageVersion)
		}
		return b.Store(memory.Config{Codec: codec, NewFunc: cfg.NewFunc, NewListFunc: cfg.NewListFunc,
			GroupResource: cfg.Resource, ResourcePrefix: cfg.Prefix, CacheContinueTokens: cfg.WatchCached,
			NoMetrics: cfg.Internal}), nil, nil
	}
}

// NewStore completes store on the storage opts makes for it: the storage is
// configured from the store's own types, key prefix (KeyPrefix, else the
// resource's default) and attribute function, objects are stored as
// storageVersion, and the store's Logger defaults to opts'.
func NewStore(opts RESTOptions, storageVersion schema.GroupVersion, store *Store) (*Store, error) {
	prefix := store.KeyPrefix
	if prefix == "" {
		prefix = DefaultResourcePrefix(store.DefaultQualifiedResource)
	}
	s, destroy, err := opts.NewStorage(StorageConfig{
		Resource:       store.DefaultQualifiedResource,
		StorageVersion: storageVersion,
		Prefix:         prefix,
		NewFunc:        store.NewFunc,
		NewListFunc:    store.NewListFunc,
		GetAttrs:       store.GetAttrs,
	})
	if err != nil {
		return nil, err
	}
	store.Storage = s
	store.DestroyFunc = destroy
	if store.StorageVersion.Empty() {
		store.StorageVersion = storageVersion
	}
	if store.Logger == nil {
		store.Logger = opts.Log()
	}
	if err := store.Complete(); err != nil {
		if destroy != nil {
			destroy()
		}
		return nil, fmt.Errorf("%s: %w", store.DefaultQualifiedResource, err)
	}
	return store, nil
}
