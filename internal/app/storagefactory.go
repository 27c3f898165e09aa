package app

import (
	"fmt"
	"log/slog"

	clientv3 "go.etcd.io/etcd/client/v3"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	apiextensionsserver "github.com/kapi-dev/kapi/pkg/apiextensions"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacher"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// StorageFactory returns how each built-in resource gets its storage: on
// etcd (embedded or external), objects are protobuf in their storage
// version behind a watch cache; on the memory backend, JSON with no cache
// (the memory store serves watches itself).
func (c *Config) StorageFactory() registry.StorageFactory {
	if c.storage.memory != nil {
		return registry.MemoryStorage(c.storage.memory)
	}
	client := c.storage.client
	prefix := c.Options.Storage.Prefix
	logger := c.Logger
	m := c.StorageMetrics
	return func(cfg registry.StorageConfig) (storage.Interface, func(), error) {
		codec, err := protobufCodec(cfg)
		if err != nil {
			return nil, nil, err
		}
		return etcdWithCache(client, prefix, logger, m, cfg, codec)
	}
}

// etcdWithCache is one resource's etcd3 store behind its watch cache.
func etcdWithCache(client *clientv3.Client, prefix string, logger *slog.Logger, m *storagemetrics.Metrics, cfg registry.StorageConfig, codec runtime.Codec) (storage.Interface, func(), error) {
	store := etcd3.New(client, etcd3.Config{
		Prefix:        prefix,
		Codec:         codec,
		NewFunc:       cfg.NewFunc,
		NewListFunc:   cfg.NewListFunc,
		Logger:        logger,
		GroupResource: cfg.Resource,
		Metrics:       m,
	})
	cache, err := cacher.New(cacher.Config{
		Storage:        store,
		ResourcePrefix: cfg.Prefix,
		NewFunc:        cfg.NewFunc,
		NewListFunc:    cfg.NewListFunc,
		GetAttrs:       cfg.GetAttrs,
		Logger:         logger.With("resource", cfg.Resource.String()),
		GroupResource:  cfg.Resource,
		Metrics:        m,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("watch cache for %s: %w", cfg.Resource, err)
	}
	return cache, cache.Stop, nil
}

// protobufCodec encodes objects as protobuf in the resource's storage
// version, as kube-apiserver stores built-in types.
func protobufCodec(cfg registry.StorageConfig) (runtime.Codec, error) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return nil, fmt.Errorf("no protobuf serializer for %s", cfg.Resource)
	}
	gv := cfg.StorageVersion
	return scheme.Codecs.CodecForVersions(info.Serializer, scheme.Codecs.UniversalDecoder(gv), gv, gv), nil
}

// customResourceStorage is StorageFactory for custom resources: the codec is
// the CRD server's (JSON for unstructured objects), never protobuf.
func (c *Config) customResourceStorage() apiextensionsserver.CustomResourceStorageFactory {
	if c.storage.memory != nil {
		return apiextensionsserver.MemoryCustomResourceStorage(c.storage.memory)
	}
	client := c.storage.client
	prefix := c.Options.Storage.Prefix
	logger := c.Logger
	m := c.StorageMetrics
	return func(cfg registry.StorageConfig, codec runtime.Codec) (storage.Interface, func(), error) {
		return etcdWithCache(client, prefix, logger, m, cfg, codec)
	}
}
