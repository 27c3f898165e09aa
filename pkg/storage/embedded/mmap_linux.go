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
// every remap as the file grows (16 MiB at a time). For kapi that is
// memory without use: an idle server's database file is 16 MiB of which a
// few hundred KiB are pages (the rest is the file's preallocated tail,
// read in as zeroes), and after 60,000 writes 53 MiB were resident although
// etcd reads only the pages its key index restore, its ranges and its
// write transactions' leaves touch (writes go through write(2), not the
// mapping). Without the flag a page is resident when something reads it,
// as for any other mapped file: the data, its durability and what etcd
// reads are unchanged; what MAP_POPULATE bought etcd is one sequential
// read-ahead of the whole file at open instead of faults with the
// kernel's read-ahead when its index restore walks the keys.
//
// It is set once, at initialisation, before any etcd backend of the
// process opens a database (the variable is only read when one opens).
func init() {
	if etcdBoltOptions != nil {
		etcdBoltOptions.MmapFlags &^= syscall.MAP_POPULATE
	}
}
