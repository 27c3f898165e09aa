// Package server is the generic API server every server of kapi's chain is
// built from: delegation to the next server, post-start and pre-shutdown
// hooks, health checks, the lifecycle signals, PrepareRun and Run with the
// graceful-termination protocol of spec/lifecycle.md, and secure serving.
package server
