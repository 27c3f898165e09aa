package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// loopbackOnlyTests are the tests that reach backends of their own
// (aggregated API servers, conversion webhooks), through Services of type
// ExternalName pointing at localhost: [TestLoopbackOnlyNetwork] runs them
// again where the machine has no other address.
var loopbackOnlyTests = []string{
	"TestAggregatedAPIServer",
	"TestAggregatorFollowsServiceChanges",
	"TestAggregatorBadBackends",
	"TestConversionWebhookBehindService",
}

// insideNetnsEnv is set in the environment of the tests run inside the
// network namespace.
const insideNetnsEnv = "KAPI_E2E_INSIDE_LOOPBACK_NETNS"

// TestLoopbackOnlyNetwork proves that the aggregator and conversion tests
// need no address but loopback: it runs this test binary again, for
// loopbackOnlyTests and TestInsideLoopbackOnlyNetwork only, inside a fresh
// network namespace (`unshare --net`, plus --map-root-user when not root)
// whose only interface, lo, it brings up (`ip link set lo up`). Each of
// those tests must pass there, none skipped. Without unshare or ip, or
// where network namespaces cannot be made, it skips with the reason,
// except under CI=true, where it fails.
func TestLoopbackOnlyNetwork(t *testing.T) {
	if os.Getenv(insideNetnsEnv) != "" {
		t.Skip("already inside the loopback-only network namespace")
	}
	unavailable := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("a loopback-only network namespace is required under CI=true: "+format, args...)
		}
		t.Skipf("no loopback-only network namespace (needs unshare and ip from util-linux and iproute2, and root or unprivileged user namespaces): "+format, args...)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		unavailable("%v", err)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		unavailable("%v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("this test binary: %v", err)
	}
	prefix := []string{"--net"}
	if os.Geteuid() != 0 {
		prefix = append(prefix, "--map-root-user")
	}
	// `sh -c 'ip link set lo up && exec "$0" "$@"' <binary> <args>`: the
	// namespace is brought up, then the binary replaces the shell.
	const upThenExec = `ip link set lo up && exec "$0" "$@"`
	if out, err := exec.Command(unshare, slices.Concat(prefix, []string{"--", "sh", "-c", upThenExec, "true"})...).CombinedOutput(); err != nil {
		unavailable("unshare %s: %v: %s", strings.Join(prefix, " "), err, bytes.TrimSpace(out))
	}

	tests := append([]string{"TestInsideLoopbackOnlyNetwork"}, loopbackOnlyTests...)
	timeout := 10 * time.Minute
	if deadline, ok := t.Deadline(); ok {
		timeout = time.Until(deadline) - 10*time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := slices.Concat(prefix, []string{"--", "sh", "-c", upThenExec, self,
		"-test.run", "^(" + strings.Join(tests, "|") + ")$", "-test.count=1", "-test.v",
		"-test.timeout", (timeout - 5*time.Second).String()})
	cmd := exec.CommandContext(ctx, unshare, args...)
	// The child learns which namespace it must NOT be in: this one.
	parentNetns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		unavailable("this process's network namespace: %v", err)
	}
	cmd.Env = append(os.Environ(), insideNetnsEnv+"="+parentNetns)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests inside the loopback-only network namespace failed: %v\n%s", err, tail(out, 64<<10))
	}
	for _, name := range tests {
		if !regexp.MustCompile(`(?m)^--- PASS: ` + name + ` `).Match(out) {
			t.Errorf("%s did not pass inside the namespace (skipped or not run):\n%s", name, tail(out, 64<<10))
		}
	}
	t.Logf("%s passed inside a network namespace with only lo, in %v", strings.Join(tests, ", "), time.Since(start).Round(time.Second))
}

// TestInsideLoopbackOnlyNetwork runs only inside TestLoopbackOnlyNetwork's
// namespace: it checks that the namespace is what it claims, its only
// link lo, up, and 127.0.0.1 usable. It reads no address at all: the link
// names come from `ip -o link show` run in the namespace (once it has made
// sure it is not in the namespace of the test that started it), and
// 127.0.0.1 is proven by listening on it.
func TestInsideLoopbackOnlyNetwork(t *testing.T) {
	parentNetns := os.Getenv(insideNetnsEnv)
	if parentNetns == "" {
		t.Skip("runs inside TestLoopbackOnlyNetwork's network namespace only")
	}
	netns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatalf("this process's network namespace: %v", err)
	}
	if netns == parentNetns {
		t.Fatalf("still in the starting test's network namespace %s: not looking at its links", netns)
	}
	out, err := exec.Command("ip", "-o", "link", "show").CombinedOutput()
	if err != nil {
		t.Fatalf("ip -o link show: %v\n%s", err, out)
	}
	var links []string
	loUp := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 ..."
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		name := strings.TrimSuffix(f[1], ":")
		links = append(links, name)
		if name == "lo" && strings.Contains(f[2], "UP") {
			loUp = true
		}
	}
	if !slices.Equal(links, []string{"lo"}) || !loUp {
		t.Errorf("links %v (lo up: %v), want only lo, up:\n%s", links, loUp, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.1: %v", err)
	}
	l.Close()
}

// tail returns the last n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append([]byte("...\n"), b[len(b)-n:]...)
}
