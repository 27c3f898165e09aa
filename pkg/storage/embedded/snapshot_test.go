package embedded

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestSnapshotSaveRestore: a snapshot saved from a stopped server's data
// dir restores into a new data dir that serves the same keys, at a
// revision moved forward by RestoreRevisionBump with the older revisions
// compacted; a non-empty target is refused.
func TestSnapshotSaveRestore(t *testing.T) {
	ctx := t.Context()
	base := t.TempDir()
	dir := filepath.Join(base, "etcd")
	s := start(t, dir, true)
	put, err := s.Client().Put(ctx, "/registry/k1", "v1")
	if err != nil {
		t.Fatal(err)
	}
	rev := put.Header.Revision
	// Saved through the running server's socket.
	live := filepath.Join(base, "live.db")
	if _, err := SaveDataDirSnapshot(ctx, dir, live, quietLogger()); err != nil {
		t.Fatalf("save from the running server: %v", err)
	}
	if _, err := s.Client().Put(ctx, "/registry/k2", "v2"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Saved with the server stopped: it is started for the snapshot.
	offline := filepath.Join(base, "offline.db")
	if _, err := SaveDataDirSnapshot(ctx, dir, offline, quietLogger()); err != nil {
		t.Fatalf("save from the stopped data dir: %v", err)
	}

	for _, tc := range []struct {
		file string
		want map[string]string
	}{
		{live, map[string]string{"/registry/k1": "v1"}},
		{offline, map[string]string{"/registry/k1": "v1", "/registry/k2": "v2"}},
	} {
		out := filepath.Join(t.TempDir(), "etcd")
		if err := RestoreSnapshot(tc.file, out, quietLogger()); err != nil {
			t.Fatalf("restore %s: %v", tc.file, err)
		}
		fi, err := os.Stat(out)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("restored dir: %v %v, want mode 0700", fi.Mode(), err)
		}
		r := start(t, out, true)
		got, err := r.Client().Get(ctx, "/registry/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, kv := range got.Kvs {
			m[string(kv.Key)] = string(kv.Value)
		}
		if len(m) != len(tc.want) {
			t.Errorf("restored %s: %v, want %v", tc.file, m, tc.want)
		}
		for k, v := range tc.want {
			if m[k] != v {
				t.Errorf("restored %s: %s=%q, want %q", tc.file, k, m[k], v)
			}
		}
		if got.Header.Revision < rev+RestoreRevisionBump {
			t.Errorf("restored revision %d, want at least %d", got.Header.Revision, rev+RestoreRevisionBump)
		}
		// Revisions before the bump are compacted.
		if _, err := r.Client().Get(ctx, "/registry/k1", clientv3.WithRev(rev)); err == nil || !strings.Contains(err.Error(), "compacted") {
			t.Errorf("read at the old revision %d after restore: %v, want compacted", rev, err)
		}
		r.Close()
		if err := RestoreSnapshot(tc.file, out, quietLogger()); err == nil || !strings.Contains(err.Error(), "not empty") {
			t.Errorf("restore over existing data: %v, want a not-empty error", err)
		}
	}
	if err := RestoreSnapshot(filepath.Join(base, "missing.db"), filepath.Join(base, "x"), quietLogger()); err == nil {
		t.Error("restore of a missing file succeeded")
	}
	if _, err := SaveDataDirSnapshot(ctx, filepath.Join(base, "nodata"), filepath.Join(base, "n.db"), quietLogger()); err == nil || !strings.Contains(err.Error(), "no etcd data") {
		t.Errorf("save of a dir without data: %v", err)
	}
}
