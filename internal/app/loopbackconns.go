package app

import (
	"context"
	"net"
	"sync"
	"time"
)

// loopbackConns are the connections of the server's own loopback clients
// (controllers, RBAC and priority-and-fairness informers). They are
// closed once the drain is over (InFlightRequestsDrained): at shutdown the
// HTTP server sends GOAWAY to every HTTP/2 connection and waits until it
// closes, and Go's HTTP/2 client does not close a connection that was idle
// when its GOAWAY came (it only drops it from its pool), so the server
// would wait for x/net/http2's one-second GOAWAY timeout on each of its
// own idle loopback connections: SIGTERM → exit took over a second. Only
// the server's own clients are closed this way; other clients' idle
// connections still get GOAWAY and the timeout, as kube-apiserver's do.
type loopbackConns struct {
	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

// loopbackState is the Config's tracker, built once.
type loopbackState struct {
	once  sync.Once
	conns *loopbackConns
}

// loopbackConnTracker returns the Config's tracker, built on first use:
// its connections close when the drain is over or the Config is cleaned
// up.
func (c *Config) loopbackConnTracker() *loopbackConns {
	c.loopback.once.Do(func() {
		t := &loopbackConns{conns: map[net.Conn]struct{}{}}
		c.loopback.conns = t
		stop := make(chan struct{})
		var drained <-chan struct{}
		if c.Generic != nil && c.Generic.LifecycleSignals.InFlightRequestsDrained != nil {
			drained = c.Generic.LifecycleSignals.InFlightRequestsDrained.Signaled()
		}
		go func() {
			select {
			case <-drained:
			case <-stop:
			}
			t.closeAll()
		}()
		c.addCleanup(func() { close(stop) })
	})
	return c.loopback.conns
}

// dial dials addr and tracks the connection until it is closed; after
// closeAll it fails.
func (t *loopbackConns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		conn.Close()
		return nil, net.ErrClosed
	}
	tc := &trackedLoopbackConn{Conn: conn, t: t}
	t.conns[tc] = struct{}{}
	return tc, nil
}

// closeAll closes every tracked connection, and those dialled later.
func (t *loopbackConns) closeAll() {
	t.mu.Lock()
	t.closed = true
	conns := t.conns
	t.conns = map[net.Conn]struct{}{}
	t.mu.Unlock()
	for c := range conns {
		c.(*trackedLoopbackConn).Conn.Close()
	}
}

type trackedLoopbackConn struct {
	net.Conn
	t    *loopbackConns
	once sync.Once
}

func (c *trackedLoopbackConn) Close() error {
	c.once.Do(func() {
		c.t.mu.Lock()
		delete(c.t.conns, c)
		c.t.mu.Unlock()
	})
	return c.Conn.Close()
}
