package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// Writes of HTTP/2 connections.
//
// x/net/http2's server frames every write of a handler into a 4 KiB
// buffer and flushes it, on a goroutine of its own, each time its queue
// of frames runs empty: with handlers that flush often, that is one TLS
// record and one write(2) per DATA frame. A watch event fanned out to the
// hundred streams of one connection thus cost up to a hundred syscalls
// (on loopback each also runs the receiver's TCP processing), about a
// fifth of the server's CPU with 1,000 watchers, and the server's
// connection goroutine waited for each before framing the next.
//
// batchingConn, the connection the HTTP/2 server writes through, only
// copies what it is given and returns; a flusher goroutine, started as
// soon as there is something to write, writes everything that has
// accumulated in one tls.Conn.Write (full-size records). Nothing waits
// for a timer: the first bytes leave at once and what comes while they
// are being written leaves together next. Backpressure is kept: a Write
// waits while maxPendingWrite bytes are already queued, as the HTTP/2
// server waited for the socket before.

// maxPendingWrite bounds the bytes queued by a batchingConn and not yet
// written; a Write beyond it waits for the flusher.
const maxPendingWrite = 256 << 10

// closeFlushTimeout bounds how long a closed batchingConn keeps trying to
// write what was queued before it (the last frames, GOAWAY) to a peer that
// does not read; then the connection is closed anyway.
const closeFlushTimeout = 5 * time.Second

// pendingBufs recycles the queues of batchingConns.
var pendingBufs = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// batchingConn is a TLS connection whose writes are queued and written
// by a flusher goroutine in batches; see above. Reads and everything else
// go to the TLS connection (ConnectionState included: the HTTP/2 server
// takes Request.TLS from it).
type batchingConn struct {
	*tls.Conn

	mu   sync.Mutex
	cond sync.Cond // broadcast when the flusher takes the queue or stops
	// pending is what Write queued and the flusher has not taken yet.
	pending *[]byte
	// flushing: a flusher goroutine is running.
	flushing bool
	// closing: Close was called; the flusher closes the TLS connection
	// once the queue is written.
	closing bool
	// err is the first write error, returned by every later Write.
	err error

	// frames follows the HTTP/2 frames in what Write is given; written
	// counts the bytes Write has queued and taken the bytes the flusher
	// has taken, since the connection began. resets holds where (in
	// that count) each RST_STREAM frame not yet taken begins: see
	// flush.
	frames  frameScanner
	written int64
	taken   int64
	resets  []int64

	// closeTimeout is closeFlushTimeout (tests shorten it).
	closeTimeout time.Duration
	closeOnce    sync.Once
	closeErr     error
	closed       chan struct{} // closed once the TLS connection is closed
}

func newBatchingConn(c *tls.Conn) *batchingConn {
	b := &batchingConn{Conn: c, closeTimeout: closeFlushTimeout, closed: make(chan struct{})}
	b.cond.L = &b.mu
	return b
}

// Write queues p and makes sure a flusher is writing; it waits only while
// maxPendingWrite bytes are queued already. An error of an earlier write
// is returned here.
func (c *batchingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && !c.closing && c.pending != nil && len(*c.pending) > 0 && len(*c.pending)+len(p) > maxPendingWrite {
		c.cond.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.closing {
		return 0, net.ErrClosed
	}
	if c.pending == nil {
		c.pending = pendingBufs.Get().(*[]byte)
	}
	*c.pending = append(*c.pending, p...)
	c.frames.scan(p, c.written, func(start int64, typ byte) {
		if typ == frameTypeRSTStream {
			c.resets = append(c.resets, start)
		}
	})
	c.written += int64(len(p))
	if !c.flushing {
		c.flushing = true
		go c.flush()
	}
	return len(p), nil
}

// flush writes the queue until it is empty (or a write fails), then ends;
// on a closing connection it closes the TLS connection last.
func (c *batchingConn) flush() {
	var batch *[]byte
	for {
		c.mu.Lock()
		if batch != nil {
			recyclePending(batch)
			batch = nil
		}
		if c.err != nil || c.pending == nil || len(*c.pending) == 0 {
			if c.pending != nil {
				recyclePending(c.pending)
				c.pending = nil
			}
			c.flushing = false
			closing := c.closing
			c.cond.Broadcast()
			c.mu.Unlock()
			if closing {
				c.closeConn()
			}
			return
		}
		batch, c.pending = c.pending, nil
		base := c.taken
		c.taken += int64(len(*batch))
		cuts := c.resets
		c.resets = nil
		if c.frames.seen > 0 {
			// The queue ends inside a frame header whose type is not
			// known yet: that frame may be a reset, so it begins a
			// write of its own too (rare: x/net writes whole frames,
			// but its buffered writer may split one across writes).
			cuts = append(cuts, c.written-int64(c.frames.seen))
		}
		c.cond.Broadcast()
		c.mu.Unlock()
		if err := c.writeBatch(*batch, base, cuts); err != nil {
			c.mu.Lock()
			if c.err == nil {
				c.err = err
			}
			c.mu.Unlock()
		}
	}
}

// writeBatch writes batch, which begins at offset base of the connection's
// output, to the TLS connection: in one write, but for the stream resets
// in it, each of which (at offsets cuts) starts a write of its own (as
// does a last frame whose header is not complete yet: see flush).
//
// x/net/http2 resets a stream whose handler answered before reading the
// whole request body (RST_STREAM NO_ERROR, RFC 9113 section 8.1) right
// after the response's last frame. Written in the same TLS record as the
// response, that reset reaches a client together with the response's
// headers, and curl 7.88 (Debian 12's) then fails the request ("stream 1
// closed", exit code 92) instead of reporting, say, the 401 of a wrong
// token or the 415 of an unknown Content-Type: 7 such requests in 30
// failed here, none with kube-apiserver v1.37.2, whose x/net server
// (without kapi's batching) writes the response's headers on their own
// and the reset later. Writing each reset after what precedes it keeps
// that order on the wire: no failure in 120.
func (c *batchingConn) writeBatch(batch []byte, base int64, cuts []int64) error {
	from := 0
	for _, at := range cuts {
		i := int(at - base)
		if i <= from || i >= len(batch) {
			continue
		}
		if _, err := c.Conn.Write(batch[from:i]); err != nil {
			return err
		}
		from = i
	}
	_, err := c.Conn.Write(batch[from:])
	return err
}

// frameTypeRSTStream is the type of HTTP/2's RST_STREAM frame (RFC 9113
// section 6.4).
const frameTypeRSTStream = 0x3

// frameScanner follows the frames of an HTTP/2 connection's output (a
// server writes no preface but its first frame), given in pieces that
// need not end at frame boundaries.
type frameScanner struct {
	header [9]byte // the current frame's header, as far as seen
	seen   int     // bytes of header seen
	left   int     // bytes of the current frame's payload still to come
}

// scan reads p, which begins at offset off of the output, and calls found
// with the offset and type of each frame whose header it completes.
func (s *frameScanner) scan(p []byte, off int64, found func(start int64, typ byte)) {
	for len(p) > 0 {
		if s.left > 0 {
			n := min(s.left, len(p))
			s.left -= n
			p = p[n:]
			off += int64(n)
			continue
		}
		n := copy(s.header[s.seen:], p)
		s.seen += n
		p = p[n:]
		off += int64(n)
		if s.seen < len(s.header) {
			return
		}
		found(off-int64(len(s.header)), s.header[3])
		s.left = int(s.header[0])<<16 | int(s.header[1])<<8 | int(s.header[2])
		s.seen = 0
	}
}

func recyclePending(b *[]byte) {
	if cap(*b) > 2*maxPendingWrite {
		return // grown by one very large write: let it go
	}
	*b = (*b)[:0]
	pendingBufs.Put(b)
}

// Close stops accepting writes and closes the TLS connection once what is
// queued has been written (at most closeFlushTimeout later). It does not
// wait for that: see drained.
func (c *batchingConn) Close() error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	flushing := c.flushing
	c.cond.Broadcast()
	c.mu.Unlock()
	if !flushing {
		return c.closeConn()
	}
	t := time.AfterFunc(c.closeTimeout, func() { c.closeConn() })
	go func() {
		<-c.closed
		t.Stop()
	}()
	return nil
}

func (c *batchingConn) closeConn() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.Conn.Close()
		close(c.closed)
	})
	return c.closeErr
}

// drained is closed once the TLS connection is closed (after Close, and
// after what was queued before it is written or given up on).
func (c *batchingConn) drained() <-chan struct{} { return c.closed }

// tuneHTTP2Writes sets how srv's HTTP/2 connections (over TLS, as
// configured by http2.ConfigureServer with h2) write.
//
// The write scheduler: x/net/http2's default, round robin over every open
// stream, looks at each stream's queue in turn to find one with a frame,
// so with a hundred idle watches on a connection each frame written cost
// a walk over up to a hundred queues (a tenth of the server's CPU with
// 1,000 watchers). The random scheduler keeps only the streams with
// frames waiting (and control frames first, as the default does); frames
// of one stream still leave in order, and both ignore HTTP/2 priorities.
// (x/net marks user-chosen schedulers deprecated for the HTTP/2 server
// of Go 1.27's net/http, which ignores them; kapi builds with Go 1.26.)
//
// The connection: writes go through a batchingConn. The "h2" entry of
// srv.TLSNextProto is replaced with one that does what x/net/http2's does
// (serve the connection with srv as the base configuration and net/http's
// connection context) on the wrapped connection, and returns only once
// its writes are done: net/http closes the raw connection after that.
func tuneHTTP2Writes(srv *http.Server, h2 *http2.Server) {
	h2.NewWriteScheduler = http2.NewRandomWriteScheduler
	srv.TLSNextProto[http2.NextProtoTLS] = func(hs *http.Server, tc *tls.Conn, h http.Handler) {
		// net/http hands the connection's base context down through this
		// method of h, as x/net/http2's own TLSNextProto reads it.
		var ctx context.Context
		if bc, ok := h.(interface{ BaseContext() context.Context }); ok {
			ctx = bc.BaseContext()
		}
		c := newBatchingConn(tc)
		h2.ServeConn(c, &http2.ServeConnOpts{Context: ctx, Handler: h, BaseConfig: hs})
		c.Close()
		<-c.drained()
	}
}
