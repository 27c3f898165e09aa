package embedded

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func start(t *testing.T, dir string, noFsync bool) *Server {
	t.Helper()
	s, err := Start(t.Context(), Config{DataDir: dir, Logger: quietLogger(), UnsafeNoFsync: noFsync})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Logf("ready in %s at %v", s.ReadyIn(), s.Endpoints())
	return s
}

func TestRestartKeepsData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	ctx := t.Context()
	s := start(t, dir, true)
	resp, err := s.Client().Put(ctx, "/k", "v1")
	if err != nil {
		t.Fatal(err)
	}
	rev := resp.Header.Revision
	s.Close()
	s.Close() // idempotent

	s = start(t, dir, true)
	defer s.Close()
	got, err := s.Client().Get(ctx, "/k")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v1" || got.Header.Revision != rev {
		t.Fatalf("after restart got %v at revision %d, want v1 at %d", got.Kvs, got.Header.Revision, rev)
	}
}

func TestListenersAreLocal(t *testing.T) {
	tests := []struct {
		name       string
		dir        string
		wantScheme string
	}{
		{name: "short path: unix socket", dir: filepath.Join(t.TempDir(), "etcd"), wantScheme: "unix://"},
		{name: "long path: loopback tcp", dir: filepath.Join(t.TempDir(), strings.Repeat("d", 120), "etcd"), wantScheme: "http://127.0.0.1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, tt.dir, true)
			defer s.Close()
			if ep := s.Endpoints()[0]; !strings.HasPrefix(ep, tt.wantScheme) {
				t.Errorf("got endpoint %s, want %s...", ep, tt.wantScheme)
			}
			for _, l := range s.etcd.Peers {
				if host := l.Addr().String(); !strings.HasPrefix(host, "127.0.0.1:") {
					t.Errorf("got peer listener on %s, want loopback", host)
				}
			}
			if _, err := s.Client().Put(t.Context(), "/k", "v"); err != nil {
				t.Errorf("put through %s: %v", s.Endpoints()[0], err)
			}
			if fi, err := os.Stat(tt.dir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("data dir mode: got %v, %v, want 0700", fi.Mode().Perm(), err)
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := Start(t.Context(), Config{}); err == nil {
		t.Error("no data dir: got nil error")
	}
	// A data dir that is a file.
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(t.Context(), Config{DataDir: f, Logger: quietLogger()}); err == nil {
		t.Error("data dir is a file: got nil error")
	}
	// An already cancelled context.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if s, err := Start(ctx, Config{DataDir: filepath.Join(t.TempDir(), "etcd"), Logger: quietLogger(), UnsafeNoFsync: true}); err == nil {
		s.Close()
		t.Error("cancelled context: got nil error")
	}
}

// envDurabilityChild makes the test binary a writer child: it writes keys
// to the etcd in the given data dir (fsync on) and prints each key once its
// write is acknowledged.
const envDurabilityChild = "KAPI_EMBEDDED_DURABILITY_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envDurabilityChild); dir != "" {
		os.Exit(durabilityChild(dir))
	}
	os.Exit(m.Run())
}

func durabilityChild(dir string) int {
	ctx := context.Background()
	s, err := Start(ctx, Config{DataDir: dir, Logger: quietLogger()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		return 1
	}
	fmt.Println("ready")
	for i := 0; ; i++ {
		key := fmt.Sprintf("/durable/%06d", i)
		resp, err := s.Client().Put(ctx, key, strconv.Itoa(i))
		if err != nil {
			fmt.Fprintln(os.Stderr, "put:", err)
			return 1
		}
		fmt.Printf("%s %d\n", key, resp.Header.Revision)
	}
}

// TestDurableAcrossKill9: a child process writes with fsync on and reports
// each acknowledged write; it is killed with SIGKILL mid-stream; after a
// restart on the same data dir every acknowledged write is there and the
// revision continues.
func TestDurableAcrossKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := filepath.Join(t.TempDir(), "etcd")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envDurabilityChild+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	const killAfter = 200
	acked := map[string]int64{}
	var lastRev int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			continue
		}
		var key string
		var rev int64
		if _, err := fmt.Sscanf(line, "%s %d", &key, &rev); err != nil {
			t.Fatalf("child said %q: %v", line, err)
		}
		acked[key], lastRev = rev, rev
		if len(acked) == killAfter {
			// Mid-stream: the child is writing the next key right now.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	_ = cmd.Wait()
	// Lines already in the pipe when the child died were acknowledged too.
	if !killed {
		t.Fatalf("child exited after %d writes, before it was killed", len(acked))
	}
	if len(acked) < killAfter {
		t.Fatalf("got %d acknowledged writes, want at least %d", len(acked), killAfter)
	}

	begin := time.Now()
	s := start(t, dir, false)
	defer s.Close()
	t.Logf("restart after kill -9: ready in %s", time.Since(begin))
	resp, err := s.Client().Get(t.Context(), "/durable/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int64{}
	for _, kv := range resp.Kvs {
		found[string(kv.Key)] = kv.ModRevision
	}
	for key, rev := range acked {
		if got, ok := found[key]; !ok || got != rev {
			t.Errorf("acknowledged %s at revision %d: got revision %d (present %v)", key, rev, got, ok)
		}
	}
	if resp.Header.Revision < lastRev {
		t.Errorf("revision went back: got %d, last acknowledged %d", resp.Header.Revision, lastRev)
	}
	put, err := s.Client().Put(t.Context(), "/after", "x")
	if err != nil || put.Header.Revision <= lastRev {
		t.Errorf("write after restart: got revision %v (%v), want > %d", put, err, lastRev)
	}
	t.Logf("%d writes acknowledged before kill -9, %d found", len(acked), len(found))
}

// BenchmarkStart measures the time to ready of a fresh server and of a
// restart on existing data, with fsync on.
func BenchmarkStart(b *testing.B) {
	b.Run("fresh", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s, err := Start(context.Background(), Config{DataDir: filepath.Join(b.TempDir(), strconv.Itoa(i)), Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
	})
	b.Run("restart", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "etcd")
		s, err := Start(context.Background(), Config{DataDir: dir, Logger: quietLogger()})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		for b.Loop() {
			s, err := Start(context.Background(), Config{DataDir: dir, Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
	})
}
