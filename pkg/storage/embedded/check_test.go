package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// populated returns the data dir of a stopped etcd that holds some keys.
func populated(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "etcd")
	s := start(t, dir, true)
	for i := range 200 {
		if _, err := s.Client().Put(t.Context(), fmt.Sprintf("/registry/k%04d", i), strings.Repeat("v", 200)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	return dir
}

func onlyWAL(t *testing.T, dir string) string {
	t.Helper()
	wals, err := filepath.Glob(filepath.Join(walDir(dir), "*.wal"))
	if err != nil || len(wals) != 1 {
		t.Fatalf("WAL files: %v, %v; want one", wals, err)
	}
	return wals[0]
}

func writeAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptDataFailsFast: damaged storage makes Start fail within
// seconds with an error naming the damaged file and saying what to do,
// never a panic or a wait for readiness (issue 12 point 6). Before, a
// damaged database panicked, a truncated one died of SIGBUS, and a WAL
// that lost entries waited a minute for a leader.
func TestCorruptDataFailsFast(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(t *testing.T, dir string) // returns nothing; the path to name is want
		path    func(dir string) string
		corrupt bool // a *CorruptError
	}{
		{
			name:    "database meta pages zeroed",
			damage:  func(t *testing.T, dir string) { writeAt(t, backendPath(dir), 0, make([]byte, 8192)) },
			path:    backendPath,
			corrupt: true,
		},
		{
			name: "database truncated",
			damage: func(t *testing.T, dir string) {
				if err := os.Truncate(backendPath(dir), 16384); err != nil {
					t.Fatal(err)
				}
			},
			path:    backendPath,
			corrupt: true,
		},
		{
			name: "database pages overwritten",
			damage: func(t *testing.T, dir string) {
				fi, err := os.Stat(backendPath(dir))
				if err != nil {
					t.Fatal(err)
				}
				// Every page after the two meta pages.
				writeAt(t, backendPath(dir), 8192, []byte(strings.Repeat("garbage!", int(fi.Size()-8192)/8)))
			},
			path:    backendPath,
			corrupt: true,
		},
		{
			name: "WAL record flipped",
			damage: func(t *testing.T, dir string) {
				writeAt(t, onlyWAL(t, dir), 3000, []byte{0xff, 0x00, 0xff})
			},
			path:    walDir,
			corrupt: true,
		},
		{
			name:    "WAL range zeroed",
			damage:  func(t *testing.T, dir string) { writeAt(t, onlyWAL(t, dir), 4096, make([]byte, 4096)) },
			path:    walDir,
			corrupt: true,
		},
		{
			name:    "WAL header overwritten",
			damage:  func(t *testing.T, dir string) { writeAt(t, onlyWAL(t, dir), 0, []byte("garbagegarbagegarbagegarbage")) },
			path:    walDir,
			corrupt: true,
		},
		{
			name: "WAL removed",
			damage: func(t *testing.T, dir string) {
				if err := os.Remove(onlyWAL(t, dir)); err != nil {
					t.Fatal(err)
				}
			},
			path:    walDir,
			corrupt: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := populated(t)
			tt.damage(t, dir)
			begin := time.Now()
			s, err := Start(t.Context(), Config{DataDir: dir, Logger: quietLogger(), UnsafeNoFsync: true, StartTimeout: 30 * time.Second})
			took := time.Since(begin)
			if err == nil {
				s.Close()
				t.Fatal("Start on damaged data: got nil error")
			}
			t.Logf("after %s: %v", took, err)
			if took > 5*time.Second {
				t.Errorf("Start took %s to fail, want under 5s", took)
			}
			if want := tt.path(dir); !strings.Contains(err.Error(), want) {
				t.Errorf("error does not name %s", want)
			}
			if !strings.Contains(err.Error(), "restore") || !strings.Contains(err.Error(), "snapshot") {
				t.Errorf("error does not say to restore from a snapshot")
			}
			var ce *CorruptError
			if got := errors.As(err, &ce); got != tt.corrupt {
				t.Errorf("errors.As(*CorruptError) = %v, want %v", got, tt.corrupt)
			}
		})
	}
}

// TestCheckAcceptsHealthyData: the check passes a fresh data dir and one
// written and stopped cleanly.
func TestCheckAcceptsHealthyData(t *testing.T) {
	if err := checkData(filepath.Join(t.TempDir(), "new")); err != nil {
		t.Errorf("new data dir: %v", err)
	}
	if err := checkData(populated(t)); err != nil {
		t.Errorf("healthy data dir: %v", err)
	}
}

// BenchmarkCheckData measures the check run before every start, on a data
// dir holding 20,000 keys of 1 KiB (a ~30 MiB database and its WAL).
func BenchmarkCheckData(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "etcd")
	s, err := Start(b.Context(), Config{DataDir: dir, Logger: quietLogger(), UnsafeNoFsync: true})
	if err != nil {
		b.Fatal(err)
	}
	value := strings.Repeat("v", 1024)
	for i := range 20000 {
		if _, err := s.Client().Put(b.Context(), fmt.Sprintf("/registry/k%06d", i), value); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	fi, err := os.Stat(backendPath(dir))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := checkData(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "dbMiB")
}
