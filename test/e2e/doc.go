// Package e2e holds end-to-end tests that drive a whole kapi with real
// clients: the kubectl binaries installed on the machine and client-go.
package e2e
