// Package importgraph holds a test that keeps the package layers of
// DESIGN.md §3 from growing upward arrows again: nothing under
// pkg/endpoints imports pkg/server, no API server (aggregator,
// apiextensions, controlplane) imports another's packages, and
// pkg/registry imports neither the generic server nor any API server.
package importgraph
