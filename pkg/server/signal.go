package server

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

var onlyOneSignalHandler = make(chan struct{})

// SetupSignalContext returns a context cancelled on the first SIGTERM or
// SIGINT; a second signal exits the process with code 1 at once
// (lifecycle.md 3). Installing the handler twice in one process panics:
// only the command (cmd/kapi) installs it.
func SetupSignalContext() context.Context {
	close(onlyOneSignalHandler) // panics when called twice
	ctx, cancel := context.WithCancel(context.Background())
	c := make(chan os.Signal, 2)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-c
		cancel()
		<-c
		os.Exit(1)
	}()
	return ctx
}

// SetupSignalHandler is SetupSignalContext as a channel, closed on the
// first signal.
func SetupSignalHandler() <-chan struct{} {
	return SetupSignalContext().Done()
}
