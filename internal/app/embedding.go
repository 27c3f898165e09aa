package app

import "github.com/kapi-dev/kapi/pkg/storage/memory"

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
