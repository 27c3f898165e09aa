package testwait

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fatalTB records Fatalf and ends its goroutine, as testing's does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn with a fatalTB on a goroutine of its own and returns what
// it failed with ("" if it returned).
func run(t *testing.T, fn func(tb testing.TB)) string {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	return tb.msg
}

func TestFor(t *testing.T) {
	calls := 0
	if msg := run(t, func(tb testing.TB) {
		For(tb, 10*time.Second, time.Millisecond, "third call", func() error {
			if calls++; calls < 3 {
				return errors.New("not yet")
			}
			return nil
		})
	}); msg != "" || calls != 3 {
		t.Errorf("failed with %q after %d calls, want success after 3", msg, calls)
	}
	if msg := run(t, func(tb testing.TB) {
		For(tb, 20*time.Millisecond, time.Millisecond, "never", func() error { return errors.New("last error") })
	}); msg != "never: not within 20ms: last error" {
		t.Errorf("failed with %q", msg)
	}
}

func TestUntil(t *testing.T) {
	calls := 0
	if msg := run(t, func(tb testing.TB) {
		Until(tb, 10*time.Second, time.Millisecond, "third call", func() bool { calls++; return calls == 3 })
	}); msg != "" || calls != 3 {
		t.Errorf("failed with %q after %d calls, want success after 3", msg, calls)
	}
	if msg := run(t, func(tb testing.TB) {
		Until(tb, 20*time.Millisecond, time.Millisecond, "never", func() bool { return false })
	}); !strings.HasPrefix(msg, "never: not within 20ms") {
		t.Errorf("failed with %q", msg)
	}
}
