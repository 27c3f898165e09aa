package reload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestWatcher: a changed valid file is applied once, an invalid one is
// refused (and not retried while unchanged), a missing file is a
// failure; the metrics count each.
func TestWatcher(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	write := func(s string) {
		if err := os.WriteFile(path+".tmp", []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	write("v1")
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, "authorization_config_controller", "authorization")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		applied []string
	)
	w := &Watcher{Path: path, Interval: 10 * time.Millisecond, Metrics: m, IDHash: "id", Apply: func(b []byte) error {
		if strings.HasPrefix(string(b), "bad") {
			return errors.New("invalid")
		}
		mu.Lock()
		defer mu.Unlock()
		applied = append(applied, string(b))
		return nil
	}}
	m.ConfigInfo("id", []byte("v1"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, []byte("v1")) }()
	defer func() { cancel(); <-done }()

	count := func(status string) float64 {
		return value(t, reg, "apiserver_authorization_config_controller_automatic_reloads_total", status)
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	time.Sleep(50 * time.Millisecond)
	if count("success") != 0 || count("failure") != 0 {
		t.Fatal("an unchanged file must not be reloaded")
	}
	write("v2")
	wait("v2 applied", func() bool { return count("success") == 1 })
	write("bad")
	wait("bad refused", func() bool { return count("failure") == 1 })
	time.Sleep(50 * time.Millisecond)
	if count("failure") != 1 {
		t.Errorf("the same bad content was retried: %v failures", count("failure"))
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	wait("missing file counted", func() bool { return count("failure") >= 2 })
	write("v2")
	wait("v2 applied again", func() bool { return count("success") == 2 })
	mu.Lock()
	got := strings.Join(applied, ",")
	mu.Unlock()
	if got != "v2,v2" {
		t.Errorf("applied %q, want v2,v2", got)
	}
	if v := value(t, reg, "apiserver_authorization_config_controller_last_config_info", Hash([]byte("v2"))); v != 1 {
		t.Errorf("last_config_info of v2: %v", v)
	}
	if n := series(t, reg, "apiserver_authorization_config_controller_last_config_info"); n != 1 {
		t.Errorf("last_config_info has %d series, want only the one in force", n)
	}
	if value(t, reg, "apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds", "success") == 0 {
		t.Error("no success timestamp")
	}
}

func TestHash(t *testing.T) {
	if Hash(nil) != "" || Hash([]byte("a")) != "sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb" {
		t.Errorf("Hash: %q %q", Hash(nil), Hash([]byte("a")))
	}
}

// value is the value of the series of name with a label valued label.
func value(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					if m.GetCounter() != nil {
						return m.GetCounter().GetValue()
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

func series(t *testing.T, reg *prometheus.Registry, name string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}
