//go:build !unix

package server

import (
	"errors"
	"syscall"
)

// permitPortReuse fails: SO_REUSEPORT is a Unix socket option (as
// kube-apiserver's --permit-port-sharing, unsupported on Windows).
func permitPortReuse(_, _ string, _ syscall.RawConn) error {
	return errors.New("--permit-port-sharing: port sharing is not supported on this platform")
}
