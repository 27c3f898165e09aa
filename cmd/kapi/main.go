// Command kapi is a Kubernetes API server.
package main

import (
	"fmt"
	"os"

	"github.com/kapi-dev/kapi/internal/app"
	// The embedded etcd's init-time metric registrations are recorded
	// and made here, in main, where they are cheap (package promdefer).
	"github.com/kapi-dev/kapi/internal/promdefer"
	// The start's first GC comes at a 32 MiB heap rather than 4 MiB
	// (package startheap): imported here, by the binary alone, so that
	// its init runs early in the process.
	_ "github.com/kapi-dev/kapi/internal/startheap/engage"
)

func main() {
	promdefer.Flush()
	// Invoked as kube-apiserver or etcd (envtest's KUBEBUILDER_ASSETS
	// links), kapi runs that mode.
	cmd := app.NewCommandFor(os.Args[0])
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		os.Exit(1)
	}
}
