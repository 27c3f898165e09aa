// Package datadir guards a kapi data directory (--data-dir: the embedded
// etcd's data, the generated PKI, the admin kubeconfig) so that one server
// at a time uses it.
//
// [Acquire] takes an exclusive flock(2) on <dir>/kapi.lock and writes the
// holder's PID into it. flock locks belong to the open file, so a second
// server fails at once whether it is another process or another server in
// the same process, and the kernel releases the lock when its holder dies,
// even by kill -9: a lock never goes stale.
package datadir
