// Package embedded runs etcd's own server (go.etcd.io/etcd/server/v3/embed)
// inside the kapi process: kapi's default storage when --etcd-servers is
// empty (DESIGN.md §4).
//
// The server is reachable only from this host and, when the path fits, only
// through a unix socket inside the data directory (mode 0700), so no port is
// open to other hosts or other users. When the socket path would be too long
// for the kernel it falls back to a loopback TCP port chosen by the kernel.
// The peer listener (unused by a one-member cluster, but required by etcd) is
// bound to a kernel-chosen loopback port.
//
// Writes are fsynced before they are acknowledged (unless
// Config.UnsafeNoFsync, for tests), so every acknowledged write survives a
// kill -9. Stop the server with [Server.Close] after everything that uses
// its client has stopped: it is the last thing kapi closes.
package embedded
