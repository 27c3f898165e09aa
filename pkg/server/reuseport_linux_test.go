//go:build linux

package server

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/testports"
)

// --permit-port-sharing: the listener binds a port another socket holds
// with SO_REUSEPORT (a test's reservation, or another kapi), which a
// listener without it cannot; and connections reach it.
func TestListenPermitPortSharing(t *testing.T) {
	ctx := context.Background()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(testports.Reserve(t)))
	if ln, err := Listen(ctx, "tcp", addr, false); err == nil {
		_ = ln.Close()
		t.Fatalf("bound %s, held with SO_REUSEPORT, without port sharing", addr)
	}
	ln, err := Listen(ctx, "tcp", addr, true)
	if err != nil {
		t.Fatalf("with port sharing: %v", err)
	}
	defer ln.Close()
	accepted := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_ = c.Close()
		}
		accepted <- err
	}()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	select {
	case err := <-accepted:
		if err != nil {
			t.Fatalf("accept: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not reach the listener")
	}
}
