package embedded

import (
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestSerializableReadsSeeAcknowledgedWrites: on a single member, a
// serializable read made after a write was acknowledged sees the write
// and a revision at least the write's, while other writers go on (what
// makes it linearizable there; see Server.SerializableReadsLinearizable).
// Run with fsync on, so that writes queue behind the WAL's fsyncs as in
// production.
func TestSerializableReadsSeeAcknowledgedWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	s := start(t, dir, false)
	defer s.Close()
	if !s.SerializableReadsLinearizable() {
		t.Fatal("a single member does not report linearizable serializable reads")
	}
	ctx := t.Context()
	c := s.Client()
	const writers, writes = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("/w/%d", w)
			for i := range writes {
				put, err := c.Put(ctx, key, strconv.Itoa(i))
				if err != nil {
					errs <- err
					return
				}
				got, err := c.Get(ctx, key, clientv3.WithSerializable())
				if err != nil {
					errs <- err
					return
				}
				if got.Header.Revision < put.Header.Revision || len(got.Kvs) != 1 || got.Kvs[0].ModRevision < put.Header.Revision {
					errs <- fmt.Errorf("%s: write %d acknowledged at revision %d, a serializable read after it: revision %d, %v", key, i, put.Header.Revision, got.Header.Revision, got.Kvs)
					return
				}
				// Another writer's acknowledged write is seen as well.
				other := fmt.Sprintf("/w/%d", (w+1)%writers)
				rev, err := c.Get(ctx, other, clientv3.WithSerializable(), clientv3.WithCountOnly())
				if err != nil {
					errs <- err
					return
				}
				if rev.Header.Revision < put.Header.Revision {
					errs <- fmt.Errorf("revision went back: %d after a write at %d", rev.Header.Revision, put.Header.Revision)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
