// Package kapitest starts a whole kapi server inside a Go test, exactly as
// the binary starts it (app.Run), and hands back a client-go rest.Config
// with cluster-admin credentials.
//
//	srv := kapitest.Start(t)
//	client := kubernetes.NewForConfigOrDie(srv.Config)
//
// The server listens on a free loopback port, keeps its data in t.TempDir(),
// uses the memory backend unless told otherwise, and is shut down (with the
// full graceful-termination protocol) when the test ends.
//
// A memory-backend server starts with its bootstrap objects (the RBAC
// policy, the priority-and-fairness configuration, the local APIServices,
// the system PriorityClasses and Namespaces) already in its storage, each
// with its own uid and times, as kube-apiserver restarted on existing data
// finds them: its post-start hooks read them and write nothing. For the
// default options the objects come from an image built into kapi (made
// from a cold start of the server, internal/bootimage); for other options
// (no Flags, audit log or request-header CA file) the first server of the
// process bootstraps from nothing through the whole handler chain and
// later servers with the same options start from its objects. So the
// bootstrap's requests (their audit events, admission and metrics) are
// seen by no server of the default options, and by the first server only
// of other options. Servers with Flags, an audit log or a request-header
// CA file always bootstrap from nothing.
package kapitest
