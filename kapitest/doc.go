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
// The first memory-backend server of a test process bootstraps from
// nothing: its post-start hooks create the RBAC policy, the
// priority-and-fairness configuration, the local APIServices, the system
// PriorityClasses and Namespaces through the whole handler chain. Later
// servers with the same options (no Flags, audit log or request-header CA
// file) start with those objects already in their storage, each with
// their own uid and times, as kube-apiserver restarted on existing data
// finds them: their hooks read them and write nothing, so the bootstrap's
// requests (their audit events, admission and metrics) are seen by the
// first server only.
package kapitest
