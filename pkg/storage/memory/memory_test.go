package memory

import (
	"context"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// suiteBackend adapts a Backend to the conformance suite.
type suiteBackend struct {
	b           *Backend
	cacheTokens bool // Config.CacheContinueTokens
}

func (s suiteBackend) Store(_ testing.TB, r storagetest.Resource) storage.Interface {
	return s.b.Store(Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc, CacheContinueTokens: s.cacheTokens})
}

// CacheFormTokens implements storagetest.CacheTokens.
func (s suiteBackend) CacheFormTokens() bool { return s.cacheTokens }

func (s suiteBackend) Compact(ctx context.Context, t testing.TB, rev uint64) {
	t.Helper()
	if err := s.b.Compact(ctx, rev); err != nil {
		t.Fatalf("compact at %d: %v", rev, err)
	}
}

// testConfig is a BackendConfig with short intervals for tests.
func testConfig() BackendConfig {
	return BackendConfig{
		BookmarkInterval:   100 * time.Millisecond,
		FreshWait:          100 * time.Millisecond,
		CompactionInterval: -1,
	}
}

func newTestBackend(t testing.TB, cfg BackendConfig) *Backend {
	b := NewBackend(cfg)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close backend: %v", err)
		}
	})
	return b
}

func TestConformance(t *testing.T) {
	storagetest.RunSuite(t, func(t *testing.T) storagetest.Backend {
		return suiteBackend{b: newTestBackend(t, testConfig())}
	})
}

// TestConformanceCacheTokens: the suite with continue tokens in kube's
// watch cache form (the stores of the resources kube-apiserver caches).
func TestConformanceCacheTokens(t *testing.T) {
	storagetest.RunSuite(t, func(t *testing.T) storagetest.Backend {
		return suiteBackend{b: newTestBackend(t, testConfig()), cacheTokens: true}
	})
}
