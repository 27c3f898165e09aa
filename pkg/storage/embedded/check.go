package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.uber.org/zap"
)

// CorruptError reports etcd data that etcd cannot start on: a damaged
// database (bbolt) file, or a WAL that is damaged or does not reach the
// state the database is in. It is found before etcd starts, so kapi fails
// at once with the file named instead of panicking or hanging.
type CorruptError struct {
	// Path is the damaged file or directory.
	Path string
	// DataDir is etcd's data directory the file belongs to.
	DataDir string
	Err     error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("embedded etcd: %s is damaged: %v. "+
		"kapi cannot start on this data: restore %s from a snapshot or a backup "+
		"(for example with `etcdutl snapshot restore <snapshot> --data-dir %s` after moving the damaged directory away), "+
		"or move it away to start with empty storage",
		e.Path, e.Err, e.DataDir, e.DataDir)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// etcd's on-disk layout (go.etcd.io/etcd/server/v3/storage/datadir) and
// the meta bucket's keys (storage/schema/bucket.go), v3.7.
const (
	memberDirName = "member"
	metaBucket    = "meta"
	ciKey         = "consistent_index"
)

func backendPath(dataDir string) string {
	return filepath.Join(dataDir, memberDirName, "snap", "db")
}

func walDir(dataDir string) string { return filepath.Join(dataDir, memberDirName, "wal") }

// checkData checks, read-only, the data etcd is about to start on: the
// database file opens, is not truncated and every page of its buckets
// reads; the WAL decodes and reaches the raft index the database was
// applied up to (as etcd's own verify package requires). A fresh data dir
// passes. It returns a *CorruptError for damaged data.
//
// etcd itself would panic (a damaged database), die of SIGBUS (a
// truncated one) or wait forever for a leader (a WAL that lost entries).
func checkData(dataDir string) error { return checkMemberData(dataDir, false) }

// checkMemberData is checkData for a member of a cluster when clustered is
// set: its database may then be ahead of its WAL's commit index (etcd
// applies entries the other members committed before its own WAL write is
// synced, and its database commits on a timer), which a kill -9 leaves
// behind; the other members resend those entries when it restarts.
func checkMemberData(dataDir string, clustered bool) error {
	db := backendPath(dataDir)
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		// A new member; or a database rebuilt from the WAL by etcd.
		return nil
	} else if err != nil {
		return fmt.Errorf("embedded etcd: %w", err)
	}
	var index uint64
	err := safely(func() error {
		var err error
		index, err = checkBackend(db)
		return err
	})
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			ce.DataDir = dataDir
			return ce
		}
		return err
	}
	wd := walDir(dataDir)
	if clustered {
		index = 0
	}
	if err := safely(func() error { return checkWAL(wd, index) }); err != nil {
		return &CorruptError{Path: wd, DataDir: dataDir, Err: err}
	}
	return nil
}

// safely runs fn in a goroutine of its own that turns a panic, and a
// fault on memory mapped from a file, into an error.
func safely(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		debug.SetPanicOnFault(true)
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("reading it failed: %v", r)
			}
		}()
		done <- fn()
	}()
	return <-done
}

// checkBackend opens the bbolt file read-only and walks every bucket; it
// returns the raft index the database was applied up to.
func checkBackend(path string) (index uint64, retErr error) {
	corrupt := func(err error) error { return &CorruptError{Path: path, Err: err} }
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("embedded etcd: %w", err)
	}
	// The walk below reads every page: checkMmapFlags reads the file
	// ahead when the mapping is made (MAP_POPULATE on Linux) instead of a
	// page fault, and a disk read when the file is not cached, per page
	// (bbolt's mapping is MADV_RANDOM). The mapping is closed after the
	// check; etcd's own finds the pages cached.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second, MmapFlags: checkMmapFlags})
	if errors.Is(err, berrors.ErrTimeout) {
		return 0, fmt.Errorf("embedded etcd: %s is locked by another process (another etcd or kapi on this data dir?)", path)
	}
	if err != nil {
		return 0, corrupt(err)
	}
	defer func() {
		if err := db.Close(); err != nil && retErr == nil {
			retErr = corrupt(err)
		}
	}()
	err = db.View(func(tx *bolt.Tx) error {
		// Check the size before reading any page: pages past the end of
		// a truncated file fault when read.
		if need := tx.Size(); need > fi.Size() {
			return fmt.Errorf("truncated: its meta page says %d bytes, the file has %d", need, fi.Size())
		}
		if err := recoverErr(func() error {
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
				c := b.Cursor()
				for k, _ := c.First(); k != nil; k, _ = c.Next() {
				}
				return nil
			})
		}); err != nil {
			return err
		}
		meta := tx.Bucket([]byte(metaBucket))
		if meta == nil {
			return nil
		}
		if v := meta.Get([]byte(ciKey)); len(v) == 8 {
			index = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	if err != nil {
		return 0, corrupt(err)
	}
	return index, nil
}

// recoverErr turns a panic of fn (bbolt panics on a page of the wrong
// type) into an error.
func recoverErr(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading its pages failed: %v", r)
		}
	}()
	return fn()
}

// checkWAL reads the WAL from its last snapshot on and checks that it
// reaches index, the raft index the database was applied up to.
func checkWAL(dir string, index uint64) error {
	if !wal.Exist(dir) {
		if index > 0 {
			return fmt.Errorf("no WAL, but the database was written up to raft index %d", index)
		}
		return nil
	}
	lg := zap.NewNop()
	snaps, err := wal.ValidSnapshotEntries(lg, dir)
	if err != nil {
		return err
	}
	if len(snaps) == 0 {
		return errors.New("no snapshot entry (not even the initial one)")
	}
	snap := snaps[len(snaps)-1]
	hs, err := wal.Verify(lg, dir, snap)
	if err != nil {
		return err
	}
	if index > hs.GetCommit() {
		// The WAL's last commit index may lag the database: etcd writes
		// a commit-only state record without syncing it (nothing needs
		// it to be durable), so a crash or kill -9 of a server that then
		// stayed idle loses it, while the database's batch commits the
		// applied index 100 ms later. The entries themselves were synced
		// before they were committed and applied; etcd starts on such
		// data and commits them again. Entries are missing only when the
		// database is past the WAL's last entry.
		last, err := lastWALIndex(lg, dir, snap)
		if err != nil {
			return err
		}
		if index > last {
			return fmt.Errorf("the WAL ends at raft index %d, before index %d the database was written up to: entries are missing", last, index)
		}
	}
	if index > 0 && index < snap.GetIndex() {
		return fmt.Errorf("the database is at raft index %d, before the WAL's last snapshot at %d", index, snap.GetIndex())
	}
	return nil
}

// lastWALIndex is the index of the last entry the WAL holds after snap
// (snap's own index when it holds none).
func lastWALIndex(lg *zap.Logger, dir string, snap *walpb.Snapshot) (uint64, error) {
	w, err := wal.OpenForRead(lg, dir, snap)
	if err != nil {
		return 0, err
	}
	defer w.Close()
	_, _, ents, err := w.ReadAll()
	if err != nil {
		return 0, err
	}
	if len(ents) == 0 {
		return snap.GetIndex(), nil
	}
	return ents[len(ents)-1].GetIndex(), nil
}
