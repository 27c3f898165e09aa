package datadir

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// FileName is the lock file's name inside the data directory.
const FileName = "kapi.lock"

// pidWait bounds the wait for a new holder to write its PID.
const pidWait = 200 * time.Millisecond

// HeldError reports a data directory locked by another server.
type HeldError struct {
	Dir string
	// PID is the holder's process ID, 0 if it could not be read.
	PID int
}

func (e *HeldError) Error() string {
	holder := "another kapi"
	if e.PID > 0 {
		holder = fmt.Sprintf("another kapi (pid %d)", e.PID)
		if e.PID == os.Getpid() {
			holder = fmt.Sprintf("another kapi server in this process (pid %d)", e.PID)
		}
	}
	return fmt.Sprintf("data dir %s is in use by %s: stop it first, or give this one another --data-dir", e.Dir, holder)
}

// Lock is a held lock on a data directory.
type Lock struct {
	f *os.File
}

// Acquire creates dir (mode 0700) if it is missing and locks it. It does
// not wait: if another server holds the lock it returns a *HeldError
// naming the holder's PID. Acquire touches nothing in dir but the lock
// file.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open data dir lock: %w", err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			abs, aerr := filepath.Abs(dir)
			if aerr != nil {
				abs = dir
			}
			return nil, &HeldError{Dir: abs, PID: holderPID(f)}
		}
		return nil, fmt.Errorf("lock data dir %s: %w", dir, err)
	}
	if err := writePID(f); err != nil {
		_ = f.Close() // releases the lock
		return nil, fmt.Errorf("write data dir lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Release empties the lock file (so a reader never takes a finished
// holder's PID for a live one) and releases the lock. It is safe to call
// more than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	err := f.Truncate(0)
	return errors.Join(err, f.Close()) // closing releases the flock
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// holderPID reads the holder's PID, waiting briefly for a holder that has
// just taken the lock to write it.
func holderPID(f *os.File) int {
	deadline := time.Now().Add(pidWait)
	for {
		buf := make([]byte, 32)
		n, _ := f.ReadAt(buf, 0)
		if pid, err := strconv.Atoi(string(bytes.TrimSpace(buf[:n]))); err == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
}
