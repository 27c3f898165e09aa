package main

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// The raw watch reader returns the send stamps of the bench's events in
// order, skips events without one (and events longer than its buffer),
// and stops at an ERROR event or the end of the stream. The lines are
// shaped as kube-apiserver's JSON watch frames (one WatchEvent per line).
func TestRawWatchStamps(t *testing.T) {
	long := `{"type":"MODIFIED","object":{"metadata":{"annotations":{"x":"` + strings.Repeat("y", 200) + `"}}}}`
	stream := strings.Join([]string{
		`{"type":"MODIFIED","object":{"apiVersion":"bench.kapi.dev/v1","kind":"BenchThing","metadata":{"annotations":{"bench.kapi.dev/sent":"1000"},"name":"t00001"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"t00002"},"spec":{"n":3}}}`,
		long,
		`{"type":"ADDED","object":{"metadata":{"annotations":{"a":"b","bench.kapi.dev/sent":"2000"}}}}`,
		`{"type":"ERROR","object":{"kind":"Status","code":410}}`,
		`{"type":"MODIFIED","object":{"metadata":{"annotations":{"bench.kapi.dev/sent":"3000"}}}}`,
	}, "\n") + "\n"
	w := &rawWatch{body: io.NopCloser(nil), r: bufio.NewReaderSize(strings.NewReader(stream), 180)}
	for _, want := range []int64{1000, 2000} {
		sent, received, err := w.next()
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		if sent.UnixNano() != want || received.IsZero() {
			t.Fatalf("stamp %d (received %v), want %d", sent.UnixNano(), received, want)
		}
	}
	if _, _, err := w.next(); !errors.Is(err, errWatchError) {
		t.Fatalf("after the ERROR event: %v, want errWatchError", err)
	}
	if _, _, err := w.next(); err != nil {
		t.Fatalf("next: %v", err)
	}
	if _, _, err := w.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end: %v, want EOF", err)
	}
}
