package embedded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// TestNoTCPListener: the embedded etcd opens no TCP listener (client or
// peer), whatever the data dir's length; its client socket is in a
// directory only this user can enter (issue 12 point 4). The process's
// TCP listeners are read from /proc: the inodes of LISTEN sockets in
// /proc/self/net/tcp{,6} that one of this process's fds points at.
func TestNoTCPListener(t *testing.T) {
	tests := []struct {
		name    string
		dir     string
		tempDir bool // the socket directory is a temporary one
	}{
		{name: "short path", dir: filepath.Join(t.TempDir(), "etcd")},
		{name: "long path", dir: filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60), "etcd"), tempDir: true},
		{name: "85 character path", dir: filepath.Join(t.TempDir(), strings.Repeat("d", 85-len(t.TempDir())-len("/etcd")), "etcd"), tempDir: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tcpListeners(t)
			s := start(t, tt.dir, true)
			defer s.Close()
			after := tcpListeners(t)
			for inode, addr := range after {
				if _, ok := before[inode]; !ok {
					t.Errorf("the embedded etcd opened a TCP listener on %s", addr)
				}
			}
			if n := len(s.etcd.Peers); n != 0 {
				t.Errorf("got %d peer listeners, want none", n)
			}
			for _, l := range s.etcd.Clients {
				if l.Addr().Network() != "unix" {
					t.Errorf("got client listener on %s %s, want unix", l.Addr().Network(), l.Addr())
				}
			}
			ep := s.Endpoints()[0]
			sock := strings.TrimPrefix(ep, "unix://")
			if !strings.HasPrefix(ep, "unix://") || len(sock) > maxSocketPath {
				t.Fatalf("got endpoint %s, want a unix socket path of at most %d bytes", ep, maxSocketPath)
			}
			sockDir := filepath.Dir(sock)
			if got := strings.HasPrefix(sockDir, tt.dir); got == tt.tempDir {
				t.Errorf("socket %s: inside the data dir %v, want %v", sock, got, !tt.tempDir)
			}
			fi, err := os.Lstat(sockDir)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.IsDir() || fi.Mode().Perm() != 0o700 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
				t.Errorf("socket directory %s: mode %v owner %d, want a 0700 directory owned by %d", sockDir, fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid, os.Getuid())
			}
			if _, err := s.Client().Put(t.Context(), "/k", "v"); err != nil {
				t.Errorf("put through %s: %v", ep, err)
			}
			if fi, err := os.Stat(tt.dir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("data dir mode: got %v, %v, want 0700", fi.Mode().Perm(), err)
			}
			s.Close()
			if _, err := os.Stat(sockDir); tt.tempDir && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temporary socket directory %s after Close: %v, want it removed", sockDir, err)
			}
		})
	}
}

// TestSocketDirMadePrivate: a socket directory left with a wider mode (or
// made so by someone) is narrowed to 0700 at start.
func TestSocketDirMadePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	if err := os.MkdirAll(filepath.Join(dir, socketDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, socketDirName), 0o777); err != nil {
		t.Fatal(err)
	}
	s := start(t, dir, true)
	defer s.Close()
	fi, err := os.Stat(filepath.Join(dir, socketDirName))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory: got %v, %v, want mode 0700", fi.Mode().Perm(), err)
	}
}

// tcpListeners returns the TCP sockets in LISTEN state this process holds,
// by inode, with their local address (hex, as /proc shows it).
func tcpListeners(t *testing.T) map[string]string {
	t.Helper()
	listening := map[string]string{}
	for _, f := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if len(fields) < 10 || fields[3] != "0A" {
				continue
			}
			listening[fields[9]] = fields[1]
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]string{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		inode, ok := strings.CutPrefix(target, "socket:[")
		if !ok {
			continue
		}
		inode = strings.TrimSuffix(inode, "]")
		if addr, ok := listening[inode]; ok {
			own[inode] = addr
		}
	}
	return own
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
	if dir := os.Getenv(envIdleChild); dir != "" {
		os.Exit(idleChild(dir))
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

// recordHandler keeps the level and message of every record.
type recordHandler struct {
	mu      sync.Mutex
	records []string
	errors  []string
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	h.records = append(h.records, line)
	if r.Level >= slog.LevelError {
		h.errors = append(h.errors, line)
	}
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordHandler) errorLines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.errors...)
}

// TestCleanStartLogsNoError: a start on a new data dir, and a restart,
// log no ERROR (issue 11 point 7: etcd logged "failed to update storage
// version ... missing term information" on every new data dir); the
// storage version etcd failed to write then is written.
func TestCleanStartLogsNoError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	for _, phase := range []string{"new data dir", "restart"} {
		h := &recordHandler{}
		s, err := Start(t.Context(), Config{DataDir: dir, Logger: slog.New(h), UnsafeNoFsync: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Client().Put(t.Context(), "/k", phase); err != nil {
			t.Fatal(err)
		}
		// etcd's storage-version monitor runs every 4 s: wait until
		// the version is written, which also gives it the time to log.
		deadline := time.Now().Add(15 * time.Second)
		for s.etcd.Server.StorageVersion() == nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s: storage version not written after 15s", phase)
			}
			time.Sleep(50 * time.Millisecond)
		}
		s.Close()
		if errs := h.errorLines(); len(errs) > 0 {
			t.Errorf("%s: got ERROR lines:\n%s", phase, strings.Join(errs, "\n"))
		}
	}
}
