package aggregator

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if any goroutine of this package's code (the
// controllers, probes, proxies) outlives the tests: every test stops its
// server, whose destroy functions wait for them.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines left running:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

func waitNoLeaks(within time.Duration) string {
	deadline := time.Now().Add(within)
	for {
		leaked := leakedGoroutines()
		if leaked == "" || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func leakedGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "kapi/pkg/aggregator.") && !strings.Contains(g, "TestMain") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
