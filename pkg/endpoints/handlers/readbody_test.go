package handlers

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
)

// TestReadAll: readAll returns what io.ReadAll returns for every buffer
// size, including buffers smaller and larger than the body and bodies
// that arrive a byte at a time, and passes errors on.
func TestReadAll(t *testing.T) {
	body := strings.Repeat("0123456789", 300)
	for _, size := range []int{0, 1, 10, len(body) - 1, len(body), len(body) + 1, 2 * len(body)} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(body)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			got, err := readAll(r, make([]byte, 0, size))
			if err != nil || string(got) != body {
				t.Errorf("buffer %d, one byte at a time %v: %d bytes, %v", size, oneByte, len(got), err)
			}
		}
	}
	boom := errors.New("boom")
	got, err := readAll(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(boom)), make([]byte, 0, 8))
	if !errors.Is(err, boom) || string(got) != "ab" {
		t.Errorf("got %q, %v; want \"ab\", boom", got, err)
	}
}

// TestReadBodySized: a body with its declared length is read into one
// buffer of that size (plus one byte), and a body longer than the limit
// is still refused.
func TestReadBodySized(t *testing.T) {
	s := &RequestScope{}
	body := bytes.Repeat([]byte("x"), 1400)
	req := httptest.NewRequest("PUT", "/", bytes.NewReader(body))
	data, err := s.readBody(req, metrics.BodyUpdate)
	if err != nil || !bytes.Equal(data, body) || cap(data) != len(body)+1 {
		t.Fatalf("got %d bytes (capacity %d), %v; want %d bytes in capacity %d", len(data), cap(data), err, len(body), len(body)+1)
	}
	req = httptest.NewRequest("PUT", "/", bytes.NewReader(bytes.Repeat([]byte("x"), DefaultMaxRequestBodyBytes+1)))
	if _, err := s.readBody(req, metrics.BodyUpdate); err == nil || !strings.Contains(err.Error(), "Request entity too large") {
		t.Fatalf("a body over the limit: %v", err)
	}
}
