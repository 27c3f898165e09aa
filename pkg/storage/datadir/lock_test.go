package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAcquireIsExclusive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir created with %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q (%v), want this PID %d", b, err, os.Getpid())
	}

	// A second lock on the same dir, through another path to it, fails
	// at once naming the holder.
	_, err = Acquire(filepath.Join(dir, "..", "data"))
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second Acquire: got %v, want a *HeldError", err)
	}
	if held.PID != os.Getpid() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(err.Error(), dir) {
		t.Errorf("got %q (pid %d), want the holder's PID %d and the dir", err, held.PID, os.Getpid())
	}

	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	defer l2.Release()
}

func TestHeldErrorWithoutPID(t *testing.T) {
	err := &HeldError{Dir: "/d"}
	if got := err.Error(); !strings.Contains(got, "/d is in use by another kapi:") {
		t.Errorf("got %q", got)
	}
}
