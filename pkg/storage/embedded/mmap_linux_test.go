package embedded

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestDatabaseMappingNotPopulated: a restarted server's database mapping
// holds only the pages etcd read, not the whole file (etcd maps it with
// MAP_POPULATE, which mmap_linux.go clears), and every key is still read
// back.
func TestDatabaseMappingNotPopulated(t *testing.T) {
	if etcdBoltOptions == nil {
		t.Fatal("etcd's bbolt options are not linked")
	}
	if etcdBoltOptions.MmapFlags&syscall.MAP_POPULATE != 0 {
		t.Fatalf("etcd's bbolt mmap flags %#x still hold MAP_POPULATE", etcdBoltOptions.MmapFlags)
	}
	dir := filepath.Join(t.TempDir(), "etcd")
	ctx := t.Context()
	// With fsync: bbolt grows the file only then (etcd sets NoGrowSync
	// with UnsafeNoFsync).
	s := start(t, dir, false)
	const keys = 200
	value := strings.Repeat("v", 1000)
	for i := 0; i < keys; i += 100 {
		var ops []clientv3.Op
		for j := i; j < i+100; j++ {
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("/k/%04d", j), value))
		}
		if _, err := s.Client().Txn(ctx).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	db := filepath.Join(dir, "member", "snap", "db")
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	s = start(t, dir, false)
	defer s.Close()
	rss := mappingRSS(t, db)
	t.Logf("database file %d KiB, resident %d KiB", fi.Size()>>10, rss>>10)
	// bbolt grows the file 16 MiB at a time: with MAP_POPULATE all of it
	// is resident after the restart; without, the few pages read.
	if fi.Size() < 8<<20 {
		t.Fatalf("database file is %d bytes; the test needs one bbolt has grown", fi.Size())
	}
	if rss > fi.Size()/4 {
		t.Errorf("database mapping: %d KiB resident of a %d KiB file, want the pages read only", rss>>10, fi.Size()>>10)
	}
	got, err := s.Client().Get(ctx, "/k/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != keys {
		t.Fatalf("read back %d keys, want %d", len(got.Kvs), keys)
	}
	for _, kv := range got.Kvs {
		if string(kv.Value) != value {
			t.Fatalf("%s: value of %d bytes, want the %d written", kv.Key, len(kv.Value), len(value))
		}
	}
}

// mappingRSS is the resident size, in bytes, of this process's mappings
// of path (/proc/self/smaps).
func mappingRSS(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var total int64
	in, found := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[len(fields)-1] == path
			found = found || in
			continue
		}
		if in && fields[0] == "Rss:" && len(fields) >= 2 {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("%s is not mapped by this process", path)
	}
	return total
}
