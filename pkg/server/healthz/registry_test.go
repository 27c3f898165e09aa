package healthz

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var errNotFinished = errors.New("not finished")

// hook is a post-start hook check that fails until done is set.
func hook(name string, done *bool) HealthChecker {
	return NamedCheck("poststarthook/"+name, func(*http.Request) error {
		if !*done {
			return errNotFinished
		}
		return nil
	})
}

func names(checks []HealthChecker) []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.Name()
	}
	return out
}

func installAll(t *testing.T, e *Endpoints) mapMux {
	t.Helper()
	mux := mapMux{}
	for _, r := range []*Registry{e.Healthz, e.Livez, e.Readyz} {
		if err := r.Install(mux, HandlerOptions{Logger: testLogger(io.Discard)}); err != nil {
			t.Fatal(err)
		}
	}
	return mux
}

// TestLivezGracePeriod covers health.md 28-30.
func TestLivezGracePeriod(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	const grace = 30 * time.Second
	generic := []HealthChecker{PingHealthz}
	e := NewEndpoints(clk, grace, generic, generic, generic)

	var etcdErr error = errors.New("etcd down")
	etcd := NamedGroupedCheck("etcd", "etcd", func(*http.Request) error { return etcdErr })
	if err := e.AddHealthChecks(etcd); err != nil {
		t.Fatal(err)
	}
	hookDone := false
	if err := e.AddBootSequenceHealthChecks(hook("rbac/bootstrap-roles", &hookDone)); err != nil {
		t.Fatal(err)
	}
	if err := e.AddReadyzChecks(NewShutdownCheck(make(chan struct{}))); err != nil {
		t.Fatal(err)
	}
	mux := installAll(t, e)

	type row struct {
		target   string
		wantCode int
		wantBody string
	}
	check := func(t *testing.T, rows []row) {
		t.Helper()
		for _, r := range rows {
			got := serve(t, mux, "GET", r.target)
			if got.code != r.wantCode || got.body != r.wantBody {
				t.Errorf("%s: got %d %q, want %d %q", r.target, got.code, got.body, r.wantCode, r.wantBody)
			}
		}
	}

	t.Run("within grace, etcd failing", func(t *testing.T) {
		check(t, []row{
			// Generic checks get no grace (30); the hook shows ok on livez (28).
			{"/livez?verbose", 500, "[+]ping ok\n[-]etcd failed: reason withheld\n[+]poststarthook/rbac/bootstrap-roles ok\nlivez check failed\n"},
			// readyz and healthz never apply a grace period (29).
			{"/readyz?verbose", 500, "[+]ping ok\n[-]etcd failed: reason withheld\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n"},
			{"/healthz?verbose", 500, "[+]ping ok\n[-]etcd failed: reason withheld\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nhealthz check failed\n"},
		})
	})
	etcdErr = nil
	t.Run("within grace, etcd up", func(t *testing.T) {
		check(t, []row{
			{"/livez", 200, "ok"},
			// The single-check path applies the grace too (15).
			{"/livez/poststarthook/rbac/bootstrap-roles", 200, "ok"},
			{"/readyz/poststarthook/rbac/bootstrap-roles", 500, "internal server error: not finished\n"},
			{"/healthz/poststarthook/rbac/bootstrap-roles", 500, "internal server error: not finished\n"},
			{"/readyz?exclude=poststarthook/rbac/bootstrap-roles", 200, "ok"},
		})
	})
	clk.SetTime(start.Add(grace))
	t.Run("after grace", func(t *testing.T) {
		check(t, []row{
			{"/livez?verbose", 500, "[+]ping ok\n[+]etcd ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nlivez check failed\n"},
			{"/livez/poststarthook/rbac/bootstrap-roles", 500, "internal server error: not finished\n"},
		})
	})
	hookDone = true
	t.Run("hook finished", func(t *testing.T) {
		check(t, []row{
			{"/livez", 200, "ok"},
			{"/readyz", 200, "ok"},
			{"/healthz", 200, "ok"},
		})
	})
}

// TestDelegateChecksLoseGrace covers health.md 26 and 31: the delegate's
// healthz checks are copied to all three endpoints of the outer server with
// zero grace, except names among the outer config checks; the outer server's
// own boot-sequence checks keep their grace.
func TestDelegateChecksLoseGrace(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	const grace = time.Minute

	// The delegate ("kube"): config checks, one hook, a readyz-only check.
	delegate := NewEndpoints(clk, grace, []HealthChecker{PingHealthz, passing("log")}, []HealthChecker{PingHealthz}, []HealthChecker{PingHealthz})
	innerDone := false
	if err := delegate.AddBootSequenceHealthChecks(hook("start-kube-informers", &innerDone)); err != nil {
		t.Fatal(err)
	}
	if err := delegate.AddReadyzChecks(passing("informer-sync")); err != nil {
		t.Fatal(err)
	}

	// The outer server ("aggregator").
	outerConfig := []HealthChecker{PingHealthz, passing("log")}
	outer := NewEndpoints(clk, grace, outerConfig, outerConfig, outerConfig)
	outerDone := false
	if err := outer.AddBootSequenceHealthChecks(hook("apiservice-registration-controller", &outerDone)); err != nil {
		t.Fatal(err)
	}
	if err := outer.AddDelegateChecks(outerConfig, delegate.Healthz.Checks()); err != nil {
		t.Fatal(err)
	}
	if err := outer.AddReadyzChecks(NewShutdownCheck(make(chan struct{}))); err != nil {
		t.Fatal(err)
	}

	wantLists := map[string][]string{
		"/healthz": {"ping", "log", "poststarthook/apiservice-registration-controller", "poststarthook/start-kube-informers"},
		"/livez":   {"ping", "log", "poststarthook/apiservice-registration-controller", "poststarthook/start-kube-informers"},
		"/readyz":  {"ping", "log", "poststarthook/apiservice-registration-controller", "poststarthook/start-kube-informers", "shutdown"},
	}
	for _, r := range []*Registry{outer.Healthz, outer.Livez, outer.Readyz} {
		if got, want := names(r.Checks()), wantLists[r.Path()]; !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", r.Path(), got, want)
		}
	}

	mux := installAll(t, outer)
	got := serve(t, mux, "GET", "/livez?verbose")
	want := "[+]ping ok\n[+]log ok\n[+]poststarthook/apiservice-registration-controller ok\n" +
		"[-]poststarthook/start-kube-informers failed: reason withheld\nlivez check failed\n"
	if got.code != 500 || got.body != want {
		t.Errorf("outer /livez within grace: got %d %q, want 500 %q", got.code, got.body, want)
	}
	if got := serve(t, mux, "GET", "/livez/poststarthook/start-kube-informers"); got.code != 500 {
		t.Errorf("copied hook single path: got %d, want 500", got.code)
	}
}

func TestRegistryFrozenAfterInstall(t *testing.T) {
	r := NewRegistry("/readyz", PingHealthz)
	if err := r.Add(passing("a")); err != nil {
		t.Fatal(err)
	}
	mux := mapMux{}
	if err := r.Install(mux, HandlerOptions{Logger: testLogger(io.Discard)}); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(passing("b")); !errors.Is(err, ErrInstalled) {
		t.Errorf("Add after Install: got %v, want ErrInstalled", err)
	}
	if err := r.Install(mux, HandlerOptions{}); !errors.Is(err, ErrInstalled) {
		t.Errorf("second Install: got %v, want ErrInstalled", err)
	}
	if got, want := names(r.Checks()), []string{"ping", "a"}; !slices.Equal(got, want) {
		t.Errorf("checks: got %q, want %q", got, want)
	}
	e := NewEndpoints(nil, 0, nil, nil, nil)
	installAll(t, e)
	if err := e.AddHealthChecks(PingHealthz); !errors.Is(err, ErrInstalled) {
		t.Errorf("Endpoints.AddHealthChecks after install: got %v, want ErrInstalled", err)
	}
}

// An empty registry installs a lone ping check (health.md 4).
func TestEmptyRegistry(t *testing.T) {
	e := NewEndpoints(nil, 0, nil, nil, nil)
	mux := installAll(t, e)
	for _, ep := range []string{"healthz", "livez", "readyz"} {
		got := serve(t, mux, "GET", "/"+ep+"?verbose")
		if want := "[+]ping ok\n" + ep + " check passed\n"; got.code != 200 || got.body != want {
			t.Errorf("/%s: got %d %q, want 200 %q", ep, got.code, got.body, want)
		}
	}
}
