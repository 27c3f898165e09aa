package app

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/server"
)

// The loopback clients' connections are closed when the drain is over
// (InFlightRequestsDrained), so the HTTP server's shutdown does not wait
// for its own idle HTTP/2 connections (x/net/http2 closes a connection
// whose client ignores GOAWAY only after a second); later dials fail.
// A connection closed by its client before is forgotten.
func TestLoopbackConnsCloseAfterDrain(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	c := &Config{Generic: &server.Config{LifecycleSignals: server.NewLifecycleSignals(slog.New(slog.DiscardHandler), nil)}}
	defer c.cleanup()
	tracker := c.loopbackConnTracker()
	if c.loopbackConnTracker() != tracker {
		t.Fatal("a second tracker was built")
	}
	early, err := tracker.dial(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	<-accepted
	if err := early.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := tracker.dial(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	peer := <-accepted
	defer peer.Close()
	tracker.mu.Lock()
	n := len(tracker.conns)
	tracker.mu.Unlock()
	if n != 1 {
		t.Fatalf("tracked connections: %d, want 1 (the one closed by its client is forgotten)", n)
	}

	c.Generic.LifecycleSignals.InFlightRequestsDrained.Signal()
	// The server side sees the connection end.
	if err := peer.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := peer.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("server side read after the drain: %v, want EOF", err)
	}
	if _, err := tracker.dial(t.Context(), "tcp", ln.Addr().String()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("dial after the drain: %v, want net.ErrClosed", err)
	}
}
