package cacher

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// testBookmarkInterval is how often both the underlying memory backend and
// the cachers send progress bookmarks in tests.
const testBookmarkInterval = 50 * time.Millisecond

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// memoryBackend is cachers over one memory backend.
type memoryBackend struct {
	b       *memory.Backend
	cachers map[string]*Cacher
	tune    func(*Config)
}

func newMemoryBackend(t *testing.T, tune func(*Config)) *memoryBackend {
	b := memory.NewBackend(memory.BackendConfig{
		Logger:             quietLogger(),
		BookmarkInterval:   testBookmarkInterval,
		CompactionInterval: -1,
		FreshWait:          500 * time.Millisecond,
	})
	t.Cleanup(func() { _ = b.Close() })
	return &memoryBackend{b: b, cachers: map[string]*Cacher{}, tune: tune}
}

func (m *memoryBackend) Store(t testing.TB, r storagetest.Resource) storage.Interface {
	if c, ok := m.cachers[r.Prefix]; ok {
		return c
	}
	under := m.b.Store(memory.Config{Codec: r.Codec, NewFunc: r.NewFunc, NewListFunc: r.NewListFunc})
	cfg := Config{
		Storage:          under,
		ResourcePrefix:   r.Prefix,
		NewFunc:          r.NewFunc,
		NewListFunc:      r.NewListFunc,
		GetAttrs:         r.GetAttrs,
		BookmarkInterval: testBookmarkInterval,
		Logger:           quietLogger(),
	}
	if m.tune != nil {
		m.tune(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("new cacher: %v", err)
	}
	t.Cleanup(func() { c.Stop(); logStats(t, c) })
	// As a server does before serving: a cache initialized after the
	// suite's first writes could not serve watches from before them.
	if err := c.WaitReady(t.Context()); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
	m.cachers[r.Prefix] = c
	return c
}

// CacheFormTokens implements storagetest.CacheTokens: the cachers' pages
// carry the watch cache's form of continue token.
func (m *memoryBackend) CacheFormTokens() bool { return true }

func (m *memoryBackend) Compact(ctx context.Context, t testing.TB, rev uint64) {
	// A cache whose own watch has not reached rev yet would lose it to
	// the compaction and re-initialize, ending its watchers: what a
	// server would do, but not what the suite's case is about. Let every
	// cache catch up first.
	for _, c := range m.cachers {
		waitCaughtUp(ctx, t, c, rev)
	}
	if err := m.b.Compact(ctx, rev); err != nil {
		t.Fatalf("compact at %d: %v", rev, err)
	}
	for _, c := range m.cachers {
		c.forgetBefore(rev)
	}
}

func TestConformanceMemory(t *testing.T) {
	storagetest.RunSuite(t, func(t *testing.T) storagetest.Backend {
		return newMemoryBackend(t, nil)
	})
}

// logStats logs how a cacher served requests.
func logStats(t testing.TB, c *Cacher) {
	t.Logf("cacher %s: lists %d cached, %d through; watches %d cached, %d through; gets %d cached, %d through",
		c.cfg.ResourcePrefix, c.stats.listsCached.Load(), c.stats.listsDelegated.Load(),
		c.stats.watchesCached.Load(), c.stats.watchesDelegated.Load(),
		c.stats.getsCached.Load(), c.stats.getsDelegated.Load())
}

// waitCaughtUp waits, at most 10 s, until c has seen revision rev.
func waitCaughtUp(ctx context.Context, t testing.TB, c *Cacher, rev uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		ok, err := c.waitFresh(ctx, rev, true)
		if ok {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("cache at revision %d, not caught up to %d within 10s: %v", c.Revision(), rev, err)
		}
	}
}
