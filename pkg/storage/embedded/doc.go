// Package embedded runs etcd's own server (go.etcd.io/etcd/server/v3/embed)
// inside the kapi process: kapi's default storage when --etcd-servers is
// empty (DESIGN.md §4).
//
// By default the server never listens on TCP. Its client listener is a unix socket in
// a directory only this user can enter (mode 0700, owned by the process's
// user): <data dir>/sock when the socket's path fits the kernel's limit,
// else a fresh 0700 directory under $XDG_RUNTIME_DIR or the temporary
// directory, removed by [Server.Close]. It has no peer (raft) listener: a
// one-member cluster never dials its peer, and etcd serves without one.
// Only with Config.Cluster (one member of several) does it listen on TCP,
// for peers and remote clients, both requiring certificates signed by the
// cluster's CA.
//
// Before etcd starts, its data is checked read-only (see [CorruptError]):
// a damaged or truncated database file, or a WAL that is damaged or lost
// entries the database already holds, fails Start at once with the file
// named, where etcd itself would panic, die of SIGBUS or wait forever for
// a leader. While etcd starts, its panics and fatal log entries become
// Start errors; once it is ready they are etcd's again.
//
// Writes are fsynced before they are acknowledged (unless
// Config.UnsafeNoFsync, for tests), so every acknowledged write survives a
// kill -9. Stop the server with [Server.Close] after everything that uses
// its client has stopped: it is the last thing kapi closes.
package embedded
