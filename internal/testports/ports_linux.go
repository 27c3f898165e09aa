package testports

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
	"testing"
)

// Reserve reserves a free loopback TCP port until the test ends and
// returns it. A server binds it only with SO_REUSEPORT set (see the
// package doc).
func Reserve(t testing.TB) int {
	t.Helper()
	port, release, err := reserve()
	if err != nil {
		t.Fatalf("reserve a loopback port: %v", err)
	}
	t.Cleanup(release)
	return port
}

func reserve() (port int, release func(), err error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("socket: %w", err)
	}
	// SO_REUSEPORT lets a server of this user bind alongside; leaving
	// SO_REUSEADDR unset keeps every socket without SO_REUSEPORT out,
	// even one with SO_REUSEADDR (which may otherwise share a port no
	// socket listens on).
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
		_ = syscall.Close(fd)
		return 0, nil, fmt.Errorf("set SO_REUSEPORT: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return 0, nil, fmt.Errorf("bind 127.0.0.1:0: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return 0, nil, fmt.Errorf("getsockname: %w", err)
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		_ = syscall.Close(fd)
		return 0, nil, fmt.Errorf("getsockname: unexpected address %T", sa)
	}
	return in.Port, func() { _ = syscall.Close(fd) }, nil
}
