package app

import (
	"errors"
	"slices"
	"testing"
)

// TestFileWriterOrderAndFirstError: the writes run in the order handed
// over, those after a failure are skipped, and wait reports the first
// error, as many times as it is called.
func TestFileWriterOrderAndFirstError(t *testing.T) {
	w := newFileWriter()
	var ran []int
	fail := errors.New("disk full")
	for i := range 5 {
		w.add(func() error {
			ran = append(ran, i)
			if i == 2 {
				return fail
			}
			return nil
		})
	}
	for range 2 {
		if err := w.wait(); !errors.Is(err, fail) {
			t.Fatalf("wait: %v, want %v", err, fail)
		}
	}
	if !slices.Equal(ran, []int{0, 1, 2}) {
		t.Errorf("ran %v, want [0 1 2]", ran)
	}
}

// TestDeferFileWrapsAndCallsAfter: a deferred write's error is wrapped as
// the synchronous path wraps it, and after runs only once it succeeded; a
// Config of a cluster member (or not made by NewConfig) writes at once.
func TestDeferFileWrapsAndCallsAfter(t *testing.T) {
	c := &Config{files: newFileWriter()}
	afters := 0
	d := c.deferFile("write --admin-kubeconfig", func() { afters++ })
	d(func() error { return nil })
	d(func() error { return errors.New("no space") })
	err := c.AwaitFiles()
	if err == nil || err.Error() != "write --admin-kubeconfig: no space" {
		t.Errorf("AwaitFiles: %v", err)
	}
	if afters != 1 {
		t.Errorf("after ran %d times, want 1", afters)
	}
	if (&Config{}).deferFile("x", nil) != nil {
		t.Error("a Config without a writer defers")
	}
	member := &Config{files: newFileWriter(), cluster: &clusterMember{}}
	if member.deferFile("x", nil) != nil {
		t.Error("a cluster member defers")
	}
	if err := member.AwaitFiles(); err != nil {
		t.Error(err)
	}
}
