package memory

import (
	"testing"

	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// BenchmarkStorage runs the storage benchmarks (storagetest.RunBenchmarks)
// on a memory backend with its default configuration (no compaction during
// the run, so history grows as in the first minutes of a server).
func BenchmarkStorage(b *testing.B) {
	storagetest.RunBenchmarks(b, func(b *testing.B) storagetest.Backend {
		return suiteBackend{b: newTestBackend(b, BackendConfig{CompactionInterval: -1})}
	})
}
