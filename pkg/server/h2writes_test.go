package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

// Many streams of one HTTP/2 connection, each flushing every line (as watch
// handlers do), over real TLS: every stream gets all of its lines, in
// order, and handlers still see the connection's TLS state.
func TestHTTP2BatchedWritesManyStreams(t *testing.T) {
	const streams, lines = 50, 300
	serving, client, base := tlsServing(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 || r.TLS == nil || !r.TLS.HandshakeComplete {
			http.Error(w, fmt.Sprintf("proto %d, TLS %v", r.ProtoMajor, r.TLS != nil), http.StatusBadRequest)
			return
		}
		rc := http.NewResponseController(w)
		for i := range lines {
			if _, err := fmt.Fprintf(w, "%s line %d %s\n", r.URL.Path, i, bytes.Repeat([]byte("x"), i%700)); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	})
	stop := make(chan struct{})
	stopped, listenerStopped, err := serving.Serve(h, 0, stop, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		close(stop)
		<-stopped
		<-listenerStopped
	}()
	// One connection first, so that the streams share it.
	if resp, err := client.Get(base + "/warm"); err != nil {
		t.Fatal(err)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for s := range streams {
		wg.Go(func() {
			path := fmt.Sprintf("/s%d", s)
			resp, err := client.Get(base + path)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				msg, _ := io.ReadAll(resp.Body)
				errs <- fmt.Errorf("%s: %s: %s", path, resp.Status, msg)
				return
			}
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 4096), 4096)
			n := 0
			for sc.Scan() {
				want := fmt.Sprintf("%s line %d %s", path, n, bytes.Repeat([]byte("x"), n%700))
				if sc.Text() != want {
					errs <- fmt.Errorf("%s: line %d is %.60q, want %.60q", path, n, sc.Text(), want)
					return
				}
				n++
			}
			if err := sc.Err(); err != nil {
				errs <- fmt.Errorf("%s: %w", path, err)
				return
			}
			if n != lines {
				errs <- fmt.Errorf("%s: got %d lines, want %d", path, n, lines)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// tlsPipe returns the two ends of a TLS connection over net.Pipe (no
// socket buffer: a write waits for the peer's read), handshake done.
func tlsPipe(t *testing.T) (server, client *tls.Conn) {
	t.Helper()
	b, err := pki.Ensure(pki.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(b.CA)
	c1, c2 := net.Pipe()
	server = tls.Server(c1, &tls.Config{Certificates: []tls.Certificate{b.Serving}})
	client = tls.Client(c2, &tls.Config{RootCAs: pool, ServerName: b.Serving.Leaf.DNSNames[0]})
	errc := make(chan error, 1)
	go func() { errc <- server.Handshake() }()
	if err := client.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// Writes beyond maxPendingWrite wait for the peer; everything written
// before Close arrives, in order, then the connection ends.
func TestBatchingConnBackpressureAndCloseFlushes(t *testing.T) {
	server, client := tlsPipe(t)
	if server.ConnectionState().Version == 0 {
		t.Fatal("no TLS state")
	}
	c := newBatchingConn(server)
	if c.ConnectionState().HandshakeComplete != true {
		t.Fatal("batchingConn hides the TLS state")
	}
	const chunk, total = 4 << 10, 4 * maxPendingWrite
	var want bytes.Buffer
	for i := 0; want.Len() < total; i++ {
		fmt.Fprintf(&want, "%08d", i)
	}
	data := want.Bytes()
	var mu sync.Mutex
	written := 0
	done := make(chan error, 1)
	go func() {
		for off := 0; off < len(data); off += chunk {
			if _, err := c.Write(data[off:min(off+chunk, len(data))]); err != nil {
				done <- err
				return
			}
			mu.Lock()
			written = min(off+chunk, len(data))
			mu.Unlock()
		}
		done <- c.Close()
	}()
	// Nobody reads: the writer stops after about maxPendingWrite bytes
	// (plus the batch the flusher holds).
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := written
		mu.Unlock()
		if n >= maxPendingWrite {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer queued only %d bytes without a reader", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("all %d bytes written without a reader (%v): no backpressure", total, err)
	default:
	}
	got, err := io.ReadAll(client)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("write or close: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes, want %d (first difference at %d)", len(got), len(data), firstDiff(got, data))
	}
	select {
	case <-c.drained():
	case <-time.After(10 * time.Second):
		t.Fatal("not closed after the queue was written")
	}
	if _, err := c.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v, want %v", err, net.ErrClosed)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A peer that never reads does not keep a closed connection open past
// closeFlushTimeout, and the writer blocked on it gets an error.
func TestBatchingConnCloseGivesUpOnAStuckPeer(t *testing.T) {
	server, _ := tlsPipe(t)
	c := newBatchingConn(server)
	c.closeTimeout = 200 * time.Millisecond
	// The flusher blocks on the first write, the second fills the queue,
	// the third waits for room.
	for _, n := range []int{64 << 10, maxPendingWrite} {
		if _, err := c.Write(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	blocked := make(chan error, 1)
	go func() {
		_, err := c.Write([]byte("x"))
		blocked <- err
	}()
	time.Sleep(50 * time.Millisecond)
	begin := time.Now()
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case <-c.drained():
	case <-time.After(10 * time.Second):
		t.Fatal("still open 10s after Close with a stuck peer")
	}
	if d := time.Since(begin); d < c.closeTimeout {
		t.Errorf("closed after %v, before the %v given to the flush", d, c.closeTimeout)
	}
	select {
	case err := <-blocked:
		if err == nil {
			t.Error("a write queued after Close succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write waiting for room still blocked after the connection closed")
	}
}

// h2frame returns an HTTP/2 frame of type typ on stream 1 with payload.
func h2frame(typ, flags byte, payload []byte) []byte {
	n := len(payload)
	f := []byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, 0, 0, 0, 1}
	return append(f, payload...)
}

// A stream reset leaves in a TLS record of its own, after the frames
// queued before it, even when x/net hands them over in one write (as it
// does with a response's last frame and the RST_STREAM NO_ERROR of a
// handler that did not read the request body): curl 7.88 fails a request
// whose response headers arrive together with the reset.
func TestBatchingConnWritesResetsAfterWhatPrecedes(t *testing.T) {
	headers := h2frame(0x1, 0x4, []byte("hdrs!"))
	data := h2frame(0x0, 0x1, bytes.Repeat([]byte("d"), 300))
	reset := h2frame(frameTypeRSTStream, 0, []byte{0, 0, 0, 0})
	after := h2frame(0x0, 0x0, []byte("next"))
	cases := map[string][][]byte{
		"one write":               {slices.Concat(headers, data, reset, after)},
		"reset header split":      {slices.Concat(headers, data, reset[:2]), slices.Concat(reset[2:], after)},
		"frames split everywhere": splitEvery(slices.Concat(headers, data, reset, after), 7),
	}
	for name, writes := range cases {
		t.Run(name, func(t *testing.T) {
			server, client := tlsPipe(t)
			c := newBatchingConn(server)
			// The first write starts the flusher, whose TLS write waits
			// for the client's first read below (net.Pipe has no buffer):
			// the writes after it queue up behind it.
			first := h2frame(0x4, 0, nil)
			if _, err := c.Write(first); err != nil {
				t.Fatal(err)
			}
			for _, w := range writes {
				if _, err := c.Write(w); err != nil {
					t.Fatal(err)
				}
			}
			go c.Close()
			var records [][]byte
			buf := make([]byte, 64<<10)
			for {
				// tls.Conn.Read returns at most one record's bytes.
				n, err := client.Read(buf)
				if n > 0 {
					records = append(records, slices.Clone(buf[:n]))
				}
				if err != nil {
					break
				}
			}
			got := slices.Concat(records...)
			if want := slices.Concat(first, headers, data, reset, after); !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
			}
			// The reset begins a record: the bytes before it ended one.
			resetAt := len(first) + len(headers) + len(data)
			off := 0
			for _, r := range records {
				if off < resetAt && off+len(r) > resetAt {
					t.Fatalf("a record holds bytes %d to %d, across the reset at %d", off, off+len(r), resetAt)
				}
				off += len(r)
			}
		})
	}
}

// A frame header split across two writes, the flusher taking the first
// part before the rest is written (CI, 2026-11-29: a record held the
// first two bytes of the reset): the frame still begins a record. The
// client reads all of the first part before the rest is written, so the
// flusher has always taken a queue that ends inside the reset's header.
func TestBatchingConnResetHeaderTakenBeforeItsRest(t *testing.T) {
	headers := h2frame(0x1, 0x4, []byte("hdrs!"))
	data := h2frame(0x0, 0x1, bytes.Repeat([]byte("d"), 300))
	reset := h2frame(frameTypeRSTStream, 0, []byte{0, 0, 0, 0})
	after := h2frame(0x0, 0x0, []byte("next"))
	for _, split := range []int{1, 2, 3, 4, 8} {
		t.Run(fmt.Sprintf("after %d header bytes", split), func(t *testing.T) {
			server, client := tlsPipe(t)
			c := newBatchingConn(server)
			part1 := slices.Concat(headers, data, reset[:split])
			part2 := slices.Concat(reset[split:], after)
			if _, err := c.Write(part1); err != nil {
				t.Fatal(err)
			}
			var records [][]byte
			read := 0
			buf := make([]byte, 64<<10)
			readRecord := func() error {
				// tls.Conn.Read returns at most one record's bytes.
				n, err := client.Read(buf)
				if n > 0 {
					records = append(records, slices.Clone(buf[:n]))
					read += n
				}
				return err
			}
			for read < len(part1) {
				if err := readRecord(); err != nil {
					t.Fatalf("after %d bytes of the first part: %v", read, err)
				}
			}
			if _, err := c.Write(part2); err != nil {
				t.Fatal(err)
			}
			go c.Close()
			for readRecord() == nil {
			}
			if got, want := slices.Concat(records...), slices.Concat(part1, part2); !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
			}
			resetAt := len(headers) + len(data)
			off := 0
			for _, r := range records {
				if off < resetAt && off+len(r) > resetAt {
					t.Fatalf("a record holds bytes %d to %d, across the reset at %d", off, off+len(r), resetAt)
				}
				off += len(r)
			}
		})
	}
}

func splitEvery(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}

// The scanner finds every frame, whatever the pieces it is given.
func TestFrameScannerFindsFramesAcrossPieces(t *testing.T) {
	var stream []byte
	var want []int64
	for i := range 40 {
		want = append(want, int64(len(stream)))
		stream = append(stream, h2frame(byte(i%10), 0, bytes.Repeat([]byte{byte(i)}, i*37%200))...)
	}
	for _, size := range []int{1, 2, 8, 9, 10, 100, len(stream)} {
		var s frameScanner
		var got []int64
		off := int64(0)
		for _, p := range splitEvery(stream, size) {
			s.scan(p, off, func(start int64, typ byte) {
				if typ != byte(len(got)%10) {
					t.Errorf("pieces of %d: frame %d has type %d, want %d", size, len(got), typ, len(got)%10)
				}
				got = append(got, start)
			})
			off += int64(len(p))
		}
		if !slices.Equal(got, want) {
			t.Errorf("pieces of %d: frames at %v, want %v", size, got, want)
		}
	}
}
