// Package testports reserves loopback TCP ports for a test's servers
// without a window in which another process could take them.
//
// Picking a port by listening on 127.0.0.1:0 and closing the listener
// leaves the port free until the server binds it, seconds later for an
// etcd member that waits to be added to its cluster, and free again
// whenever the server stops before a restart on it: another test package
// running alongside (go test ./... runs packages in parallel) can bind it
// in between ("bind: address already in use"). etcd's embed.Config cannot
// take an already-bound listener, so the fix cannot be to hand it one.
//
// Instead, [Reserve] binds the port with SO_REUSEPORT and without
// SO_REUSEADDR, and never listens on it, for the test's whole lifetime:
//   - no other socket can bind the port unless it too sets SO_REUSEPORT and
//     belongs to the same user, and the kernel never hands it out for a
//     bind to port 0;
//   - a server that sets SO_REUSEPORT on its listener (etcd:
//     embed.Config.SocketOpts.ReusePort) binds and listens on it while the
//     reservation holds, and again after a restart;
//   - as the reservation never listens, it never receives a connection:
//     every connection goes to the server.
//
// On systems without SO_REUSEPORT semantics as Linux's, Reserve falls back
// to picking a free port and releasing it at once (the old race).
package testports
