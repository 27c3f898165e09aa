//go:build unix

package server

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// permitPortReuse sets SO_REUSEPORT on a listener's socket before it binds.
// Unlike kube-apiserver, which logs a failure and binds without it, kapi
// fails: a server asked to share its port that could not would make the
// next instance fail with "address already in use" instead.
func permitPortReuse(_, _ string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}); cerr != nil {
		return fmt.Errorf("set SO_REUSEPORT: %w", cerr)
	}
	if err != nil {
		return fmt.Errorf("set SO_REUSEPORT: %w", err)
	}
	return nil
}
