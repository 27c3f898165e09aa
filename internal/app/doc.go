// Package app is the kapi command: flags become Options, Options are
// completed and validated, and Run builds the server chain
// (CreateServerChain), prepares it (PrepareRun) and runs it until the stop
// channel closes. It is separate from main so tests and kapitest start the
// whole server in-process exactly as the binary does.
package app
