package healthz

import (
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestNamedChecks(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		check     HealthChecker
		wantName  string
		wantGroup string // "-" means not a GroupedChecker
		wantErr   error
	}{
		{"ping", PingHealthz, "ping", "-", nil},
		{"named", NamedCheck("x", func(*http.Request) error { return boom }), "x", "-", boom},
		{"grouped", NamedGroupedCheck("etcd-override-1", "etcd", func(*http.Request) error { return nil }), "etcd-override-1", "etcd", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.check.Name(); got != tc.wantName {
				t.Errorf("Name: got %q, want %q", got, tc.wantName)
			}
			gotGroup := "-"
			if g, ok := tc.check.(GroupedChecker); ok {
				gotGroup = g.Group()
			}
			if gotGroup != tc.wantGroup {
				t.Errorf("Group: got %q, want %q", gotGroup, tc.wantGroup)
			}
			if err := tc.check.Check(nil); !errors.Is(err, tc.wantErr) {
				t.Errorf("Check: got %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// TestShutdownCheck covers health.md 21 and 14.
func TestShutdownCheck(t *testing.T) {
	ch := make(chan struct{})
	check := NewShutdownCheck(ch)
	if got := check.Name(); got != "shutdown" {
		t.Errorf("Name: got %q, want shutdown", got)
	}
	if err := check.Check(nil); err != nil {
		t.Errorf("before close: got %v, want nil", err)
	}
	close(ch)
	for range 2 {
		if err := check.Check(nil); err == nil || err.Error() != "process is shutting down" {
			t.Errorf("after close: got %v, want process is shutting down", err)
		}
	}
	mux := install(t, "/readyz", HandlerOptions{}, PingHealthz, check)
	if got := serve(t, mux, "GET", "/readyz/shutdown"); got.body != "internal server error: process is shutting down\n" {
		t.Errorf("single: got %q", got.body)
	}
}

// TestInformerSyncCheck covers health.md 20.
func TestInformerSyncCheck(t *testing.T) {
	tests := []struct {
		unsynced []string
		want     string
	}{
		{nil, ""},
		{[]string{"*v1.Pod"}, "1 informers not started yet: [*v1.Pod]"},
		{[]string{"*v1.Pod", "*v1.Namespace"}, "2 informers not started yet: [*v1.Pod *v1.Namespace]"},
	}
	for _, tc := range tests {
		check := NewInformerSyncCheck(func() []string { return tc.unsynced })
		if check.Name() != "informer-sync" {
			t.Errorf("Name: got %q, want informer-sync", check.Name())
		}
		err := check.Check(nil)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.unsynced, got, tc.want)
		}
	}
}

type fakeFactory map[reflect.Type]bool

func (f fakeFactory) WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool {
	select {
	case <-stopCh:
	default:
		panic("WaitForCacheSync called with an open channel: it would block")
	}
	return f
}

func TestCacheSyncCheck(t *testing.T) {
	type pod struct{}
	type node struct{}
	type svc struct{}
	f := fakeFactory{reflect.TypeFor[*pod](): false, reflect.TypeFor[*node](): false, reflect.TypeFor[*svc](): true}
	err := NewCacheSyncCheck(f).Check(nil)
	want := "2 informers not started yet: [*healthz.node *healthz.pod]"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	f[reflect.TypeFor[*pod]()] = true
	f[reflect.TypeFor[*node]()] = true
	if err := NewCacheSyncCheck(f).Check(nil); err != nil {
		t.Errorf("all synced: got %v, want nil", err)
	}
}

// TestDelayedHealthCheck covers health.md 28: success without running the
// check until registration + delay, then the real check.
func TestDelayedHealthCheck(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		delay   time.Duration
		elapsed time.Duration
		wantRun bool
	}{
		{"zero delay runs at once", 0, 0, true},
		{"negative delay runs at once", -time.Second, 0, true},
		{"within grace", 10 * time.Second, 0, false},
		{"just before the deadline", 10 * time.Second, 10*time.Second - time.Nanosecond, false},
		{"at the deadline", 10 * time.Second, 10 * time.Second, true},
		{"after the deadline", 10 * time.Second, time.Minute, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			ran := false
			inner := NamedCheck("poststarthook/x", func(*http.Request) error { ran = true; return errors.New("not finished") })
			d := DelayedHealthCheck(inner, clk, tc.delay)
			if d.Name() != "poststarthook/x" {
				t.Errorf("Name: got %q", d.Name())
			}
			clk.SetTime(start.Add(tc.elapsed))
			err := d.Check(nil)
			if ran != tc.wantRun {
				t.Errorf("inner ran: got %v, want %v", ran, tc.wantRun)
			}
			if got, want := err != nil, tc.wantRun; got != want {
				t.Errorf("failed: got %v (%v), want %v", got, err, want)
			}
		})
	}
}

func TestDelayedKeepsGroup(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	d := DelayedHealthCheck(NamedGroupedCheck("etcd", "etcd", func(*http.Request) error { return nil }), clk, time.Minute)
	g, ok := d.(GroupedChecker)
	if !ok || g.Group() != "etcd" {
		t.Errorf("got %T (grouped %v), want a GroupedChecker in group etcd", d, ok)
	}
	if _, ok := DelayedHealthCheck(PingHealthz, clk, time.Minute).(GroupedChecker); ok {
		t.Errorf("ungrouped check became grouped")
	}
}
