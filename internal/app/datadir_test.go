package app_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSecondServerOnDataDirExits: a second kapi on a data dir in use exits
// 1 at once, naming the holder's PID, and leaves the files alone (issue 12
// point 5: it used to rewrite admin.kubeconfig to its own port, then hang
// on etcd's database lock without a log line).
func TestSecondServerOnDataDirExits(t *testing.T) {
	dir := t.TempDir()
	first := startChildIn(t, dir, "--storage-backend=etcd3")
	client, host := first.readyClient(t)
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	before, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	beforeStat, err := os.Stat(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	begin := time.Now()
	second := startChildIn(t, dir, "--storage-backend=etcd3")
	code := second.wait(t)
	took := time.Since(begin)
	stderr := second.stderrTail.String()
	t.Logf("second kapi exited %d after %s:\n%s", code, took, stderr)
	if code != 1 {
		t.Errorf("second kapi exit code %d, want 1", code)
	}
	// The process start of the (race-instrumented) test binary is part
	// of the measure.
	if took > time.Second {
		t.Errorf("second kapi took %s to exit, want under 1s", took)
	}
	wantPID := "pid " + strconv.Itoa(first.cmd.Process.Pid)
	if !strings.Contains(stderr, "in use") || !strings.Contains(stderr, wantPID) || !strings.Contains(stderr, dir) {
		t.Errorf("second kapi's message does not say the data dir %s is in use by %s", dir, wantPID)
	}
	if strings.Contains(stderr, "starting kapi") {
		t.Errorf("second kapi got as far as starting")
	}

	after, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	afterStat, err := os.Stat(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) || !afterStat.ModTime().Equal(beforeStat.ModTime()) {
		t.Errorf("admin.kubeconfig was rewritten by the second kapi")
	}
	resp, err := client.Get(host + "/readyz")
	if err != nil {
		t.Fatalf("first kapi after the second's attempt: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("first kapi readyz: %d, want 200", resp.StatusCode)
	}
}
