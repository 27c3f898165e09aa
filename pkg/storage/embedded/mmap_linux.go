package embedded

import (
	"syscall"
	_ "unsafe" // go:linkname

	bolt "go.etcd.io/bbolt"
	_ "go.etcd.io/etcd/server/v3/storage/backend" // defines etcdBoltOptions
)

// etcdBoltOptions are the options etcd's backend opens its bbolt database
// with (storage/backend/config_linux.go). etcd exposes no setting for them.
//
//go:linkname etcdBoltOptions go.etcd.io/etcd/server/v3/storage/backend.boltOpenOptions
var etcdBoltOptions *bolt.Options

// On Linux etcd maps its database with MAP_POPULATE: every page of the
// file is read and made resident whenever bbolt maps it, at open and at
// every remap. For kapi that is memory without use: an idle server's
// database file is 16 MiB (bbolt grows it 16 MiB at a time) of which a
// few hundred KiB are pages; the rest is the file's preallocated tail,
// read in as zeroes. Without the flag a page is resident once etcd reads
// it, as for any other mapped file: the data, its durability and what
// etcd reads are unchanged. Under writes etcd comes to touch most of the
// file anyway (the pages a busy server holds do not change).
//
// It is set once, at initialisation, before any etcd backend of the
// process opens a database (the variable is only read when one opens).
func init() {
	if etcdBoltOptions != nil {
		etcdBoltOptions.MmapFlags &^= syscall.MAP_POPULATE
	}
}

// checkMmapFlags are the flags of the data check's own read-only mapping
// (checkBackend), which walks every page of the file and is closed before
// etcd starts. It keeps MAP_POPULATE, what etcd's flag was good for: on a
// file that is not in the page cache (after a reboot) the file is read
// ahead once, instead of one disk read per page fault (bbolt's mappings
// are MADV_RANDOM), and etcd's index restore then finds it cached.
const checkMmapFlags = syscall.MAP_POPULATE
