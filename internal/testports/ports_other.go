//go:build !linux

package testports

import (
	"net"
	"testing"
)

// Reserve picks a free loopback TCP port and releases it at once: without
// Linux's SO_REUSEPORT semantics nothing holds it until the server binds
// it (see the package doc).
func Reserve(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pick a loopback port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
