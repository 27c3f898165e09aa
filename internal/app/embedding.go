package app

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/bootimage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// What kapitest needs of a Config beyond building and running the chain.

// MemoryBackend is the memory backend the chain's storage uses, or nil on
// etcd (kapitest resets and snapshots it).
func (c *Config) MemoryBackend() *memory.Backend {
	if c.storage == nil {
		return nil
	}
	return c.storage.memory
}

// Cleanup releases what NewConfig acquired (listener, storage, data dir
// lock) when the chain could not be built; once built, the chain's
// destroy functions do it.
func (c *Config) Cleanup() { c.cleanup() }

// AwaitFiles returns once the files NewConfig generated are written,
// with the first write's error (Options.DeferFileWrites; without it they
// were written before NewConfig returned).
func (c *Config) AwaitFiles() error {
	if c.files == nil {
		return nil
	}
	return c.files.wait()
}

// AdminClientConfig is the client config that loading the admin
// kubeconfig NewConfig writes (Options.AdminKubeconfig) gives, made from
// the same data without reading the file back.
func (c *Config) AdminClientConfig() (*rest.Config, error) {
	if c.adminClientConfig == nil {
		return nil, fmt.Errorf("no admin kubeconfig")
	}
	return c.adminClientConfig()
}

// AwaitRequestsInFlight returns once every non-long-running request that
// was in flight when it was called has finished (later requests do not
// hold it up), or when ctx ends. kapitest's Reset calls it after
// changing storage directly: a write admitted before the change (a
// controller's default ServiceAccount in a namespace being removed) has
// then landed and can be removed too.
func (c *Config) AwaitRequestsInFlight(ctx context.Context) error {
	if c.requests == nil {
		return nil
	}
	select {
	case <-c.requests.Barrier():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// seed writes an instantiated bootstrap image into the memory storage
// before the chain is built (Options.BootstrapImage).
func (c *Config) seed(image func() (map[string][]byte, error)) error {
	objs, err := image()
	if err != nil {
		return err
	}
	mb := c.MemoryBackend()
	if mb == nil {
		return fmt.Errorf("bootstrap image: no memory storage")
	}
	if err := bootimage.Seed(objs, mb); err != nil {
		return err
	}
	c.Logger.Debug("storage: seeded with the bootstrap image", "objects", len(objs))
	return nil
}
