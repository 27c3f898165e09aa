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
package kapitest
