// Package testwait polls a test's condition until it holds, and fails the
// test when it does not hold in time. Each test package keeps its own
// timeout and interval (a condition that asks a server every 5 ms and one
// that asks an etcd cluster every 250 ms are not the same load), usually
// in a one-line helper of its own.
package testwait

import (
	"errors"
	"testing"
	"time"
)

// For calls cond, then every interval again until it returns nil. Once
// timeout has passed since the first call and cond still fails, it fails
// t with what and cond's last error. cond is called at least once.
func For(t testing.TB, timeout, interval time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, timeout, err)
		}
		time.Sleep(interval)
	}
}

// Until is For with a condition that is only true or false.
func Until(t testing.TB, timeout, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	For(t, timeout, interval, what, func() error {
		if cond() {
			return nil
		}
		return errFalse
	})
}

var errFalse = errors.New("still false")
