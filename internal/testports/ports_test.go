//go:build linux

package testports

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
	"testing"
)

// reusePort is a ListenConfig whose listeners set SO_REUSEPORT, as etcd's
// with SocketOpts.ReusePort.
var reusePort = net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}); cerr != nil {
		return cerr
	}
	return err
}}

// TestReserve: a reserved port is refused to a plain listener (and never
// handed out for port 0), served by a SO_REUSEPORT listener, which gets
// every connection, and again after that listener closed (a restart).
func TestReserve(t *testing.T) {
	port := Reserve(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if l, err := net.Listen("tcp", addr); !errors.Is(err, syscall.EADDRINUSE) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("plain listen on the reserved port: %v, want EADDRINUSE", err)
	}
	for range 2 { // a start and a restart
		l, err := reusePort.Listen(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatalf("SO_REUSEPORT listen on the reserved port: %v", err)
		}
		accepted := make(chan struct{})
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					close(accepted)
					return
				}
				_, _ = c.Write([]byte{1})
				c.Close()
			}
		}()
		for range 20 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			b := make([]byte, 1)
			if _, err := c.Read(b); err != nil {
				t.Fatalf("a connection did not reach the server: %v", err)
			}
			c.Close()
		}
		l.Close()
		<-accepted
	}
	for range 2000 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if got == port {
			t.Fatalf("port 0 was given the reserved port %d", port)
		}
	}
}
