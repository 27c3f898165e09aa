package healthz

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

func wantPlainNoSniff(t *testing.T, h http.Header) {
	t.Helper()
	if got, want := h.Get("Content-Type"), "text/plain; charset=utf-8"; got != want {
		t.Errorf("Content-Type: got %q, want %q", got, want)
	}
	if got, want := h.Get("X-Content-Type-Options"), "nosniff"; got != want {
		t.Errorf("X-Content-Type-Options: got %q, want %q", got, want)
	}
}

// TestAggregateFormat covers health.md 3, 5-11 byte for byte.
func TestAggregateFormat(t *testing.T) {
	etcd := NamedGroupedCheck("etcd", "etcd", func(*http.Request) error { return nil })
	etcdOverride := NamedGroupedCheck("etcd-override-0", "etcd", func(*http.Request) error { return nil })
	etcdReady := NamedGroupedCheck("etcd-readiness", "etcd-readiness", func(*http.Request) error { return nil })
	badGrouped := NamedGroupedCheck("kms-provider-0", "kms", func(*http.Request) error { return io.ErrUnexpectedEOF })

	tests := []struct {
		name     string
		path     string
		checks   []HealthChecker
		query    string
		wantCode int
		wantBody string
	}{
		{
			name:     "all pass, not verbose",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz, passing("log")},
			wantCode: 200,
			wantBody: "ok",
		},
		{
			name:     "all pass, verbose",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz, passing("log"), passing("shutdown")},
			query:    "?verbose",
			wantCode: 200,
			wantBody: "[+]ping ok\n[+]log ok\n[+]shutdown ok\nreadyz check passed\n",
		},
		{
			name:     "endpoint name follows the path",
			path:     "/livez",
			checks:   []HealthChecker{PingHealthz},
			query:    "?verbose",
			wantCode: 200,
			wantBody: "[+]ping ok\nlivez check passed\n",
		},
		{
			name:     "healthz",
			path:     "/healthz",
			checks:   []HealthChecker{PingHealthz},
			query:    "?verbose=1",
			wantCode: 200,
			wantBody: "[+]ping ok\nhealthz check passed\n",
		},
		{
			name:     "failure is verbose without verbose",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz, passing("log"), failing("shutdown", "process is shutting down")},
			wantCode: 500,
			wantBody: "[+]ping ok\n[+]log ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n",
		},
		{
			name:     "failure with verbose",
			path:     "/readyz",
			checks:   []HealthChecker{failing("etcd", "boom"), PingHealthz},
			query:    "?verbose",
			wantCode: 500,
			wantBody: "[-]etcd failed: reason withheld\n[+]ping ok\nreadyz check failed\n",
		},
		{
			name:     "every failing check is listed",
			path:     "/healthz",
			checks:   []HealthChecker{failing("a", "x"), failing("b", "y")},
			wantCode: 500,
			wantBody: "[-]a failed: reason withheld\n[-]b failed: reason withheld\nhealthz check failed\n",
		},
		{
			name:     "exclude a failing check by name",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz, failing("shutdown", "process is shutting down")},
			query:    "?exclude=shutdown",
			wantCode: 200,
			wantBody: "ok",
		},
		{
			name:     "exclude by name, verbose",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz, failing("shutdown", "process is shutting down")},
			query:    "?exclude=shutdown&verbose",
			wantCode: 200,
			wantBody: "[+]ping ok\n[+]shutdown excluded: ok\nreadyz check passed\n",
		},
		{
			name:     "exclude repeated",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz, failing("etcd", "x"), failing("log", "y")},
			query:    "?exclude=etcd&exclude=log&verbose",
			wantCode: 200,
			wantBody: "[+]ping ok\n[+]etcd excluded: ok\n[+]log excluded: ok\nreadyz check passed\n",
		},
		{
			name:     "exclude is not split on commas",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz, failing("etcd", "x"), passing("log")},
			query:    "?exclude=etcd,log&verbose",
			wantCode: 500,
			wantBody: "[+]ping ok\n[-]etcd failed: reason withheld\n[+]log ok\n" +
				"warn: some health checks cannot be excluded: no matches for \"etcd,log\"\nreadyz check failed\n",
		},
		{
			name:     "a name with a comma is excluded by the whole value",
			path:     "/readyz",
			checks:   []HealthChecker{failing("a,b", "x")},
			query:    "?exclude=a,b&verbose",
			wantCode: 200,
			wantBody: "[+]a,b excluded: ok\nreadyz check passed\n",
		},
		{
			name:     "warn line sorted, quoted, comma-joined, verbose",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz},
			query:    "?exclude=zz&exclude=a&exclude=m&exclude=a&verbose",
			wantCode: 200,
			wantBody: "[+]ping ok\nwarn: some health checks cannot be excluded: no matches for \"a\",\"m\",\"zz\"\nreadyz check passed\n",
		},
		{
			name:     "warn line Go-quotes odd names",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz},
			query:    "?exclude=a%22b&exclude=&exclude=%0A&verbose",
			wantCode: 200,
			wantBody: "[+]ping ok\nwarn: some health checks cannot be excluded: no matches for \"\",\"\\n\",\"a\\\"b\"\nreadyz check passed\n",
		},
		{
			name:     "warn line is not shown on plain success",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz},
			query:    "?exclude=nope",
			wantCode: 200,
			wantBody: "ok",
		},
		{
			name:     "warn line is shown on failure",
			path:     "/livez",
			checks:   []HealthChecker{failing("etcd", "x")},
			query:    "?exclude=nope",
			wantCode: 500,
			wantBody: "[-]etcd failed: reason withheld\nwarn: some health checks cannot be excluded: no matches for \"nope\"\nlivez check failed\n",
		},
		{
			name:     "exclude a group",
			path:     "/readyz",
			checks:   []HealthChecker{PingHealthz, etcdReady, badGrouped, passing("shutdown")},
			query:    "?exclude=kms&verbose",
			wantCode: 200,
			wantBody: "[+]ping ok\n[+]etcd-readiness ok\n[+]kms-provider-0 excluded with kms: ok\n[+]shutdown ok\nreadyz check passed\n",
		},
		{
			name:     "name match first, then the group of the same name",
			path:     "/readyz",
			checks:   []HealthChecker{etcd, etcdOverride, etcdReady},
			query:    "?exclude=etcd&verbose",
			wantCode: 200,
			wantBody: "[+]etcd excluded: ok\n[+]etcd-override-0 excluded with etcd: ok\n[+]etcd-readiness ok\nreadyz check passed\n",
		},
		{
			name:     "exclude a grouped check by its own name only",
			path:     "/readyz",
			checks:   []HealthChecker{etcd, etcdOverride},
			query:    "?exclude=etcd-override-0&verbose",
			wantCode: 200,
			wantBody: "[+]etcd ok\n[+]etcd-override-0 excluded: ok\nreadyz check passed\n",
		},
		{
			name:     "group and name exclusions together, one unmatched",
			path:     "/readyz",
			checks:   []HealthChecker{etcdReady, etcdOverride, failing("shutdown", "x")},
			query:    "?exclude=etcd&exclude=shutdown&exclude=etcd-readiness&exclude=kms&verbose",
			wantCode: 200,
			wantBody: "[+]etcd-readiness excluded: ok\n[+]etcd-override-0 excluded with etcd: ok\n[+]shutdown excluded: ok\n" +
				"warn: some health checks cannot be excluded: no matches for \"kms\"\nreadyz check passed\n",
		},
		{
			name:     "ungrouped checks are not matched by group",
			path:     "/readyz",
			checks:   []HealthChecker{failing("x", "boom")},
			query:    "?exclude=",
			wantCode: 500,
			wantBody: "[-]x failed: reason withheld\nwarn: some health checks cannot be excluded: no matches for \"\"\nreadyz check failed\n",
		},
		{
			name:     "empty group is not matched by an empty exclude",
			path:     "/readyz",
			checks:   []HealthChecker{NamedGroupedCheck("x", "", func(*http.Request) error { return io.EOF })},
			query:    "?exclude=",
			wantCode: 500,
			wantBody: "[-]x failed: reason withheld\nwarn: some health checks cannot be excluded: no matches for \"\"\nreadyz check failed\n",
		},
		{
			name:     "no checks installs ping",
			path:     "/readyz",
			query:    "?verbose",
			wantCode: 200,
			wantBody: "[+]ping ok\nreadyz check passed\n",
		},
		{
			name:     "order is registration order",
			path:     "/healthz",
			checks:   []HealthChecker{passing("z"), PingHealthz, passing("a"), passing("poststarthook/rbac/bootstrap-roles")},
			query:    "?verbose",
			wantCode: 200,
			wantBody: "[+]z ok\n[+]ping ok\n[+]a ok\n[+]poststarthook/rbac/bootstrap-roles ok\nhealthz check passed\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mux := install(t, tc.path, HandlerOptions{}, tc.checks...)
			got := serve(t, mux, http.MethodGet, tc.path+tc.query)
			if got.code != tc.wantCode {
				t.Errorf("status: got %d, want %d", got.code, tc.wantCode)
			}
			if got.body != tc.wantBody {
				t.Errorf("body:\ngot  %q\nwant %q", got.body, tc.wantBody)
			}
			wantPlainNoSniff(t, got.header)
		})
	}
}

// TestVerboseForms covers health.md 10: the key counts if present at all.
func TestVerboseForms(t *testing.T) {
	const verboseBody = "[+]ping ok\nreadyz check passed\n"
	tests := []struct {
		query string
		want  string
	}{
		{"", "ok"},
		{"?verbose", verboseBody},
		{"?verbose=", verboseBody},
		{"?verbose=0", verboseBody},
		{"?verbose=false", verboseBody},
		{"?verbose=true", verboseBody},
		{"?verbose&verbose=1", verboseBody},
		{"?exclude=x&verbose", "[+]ping ok\nwarn: some health checks cannot be excluded: no matches for \"x\"\nreadyz check passed\n"},
		{"?Verbose", "ok"},
		{"?verbosex", "ok"},
		{"?v", "ok"},
		{"?verbose%3D1", "ok"}, // an escaped '=' belongs to the key: "verbose=1"
	}
	mux := install(t, "/readyz", HandlerOptions{}, PingHealthz)
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := serve(t, mux, http.MethodGet, "/readyz"+tc.query)
			if got.code != 200 || got.body != tc.want {
				t.Errorf("got %d %q, want 200 %q", got.code, got.body, tc.want)
			}
		})
	}
}

// TestMethodIgnored covers health.md 2: any method runs the checks.
func TestMethodIgnored(t *testing.T) {
	check, runs := counting("c")
	mux := install(t, "/livez", HandlerOptions{}, check)
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions, "FOO"}
	for i, m := range methods {
		for _, path := range []string{"/livez", "/livez/c"} {
			got := serve(t, mux, m, path+"?verbose")
			if got.code != 200 {
				t.Errorf("%s %s: got %d, want 200", m, path, got.code)
			}
		}
		if got, want := runs(), 2*(i+1); got != want {
			t.Errorf("after %s: check ran %d times, want %d", m, got, want)
		}
	}
}

// TestSingleCheck covers health.md 13-15.
func TestSingleCheck(t *testing.T) {
	checks := []HealthChecker{
		PingHealthz,
		failing("shutdown", "process is shutting down"),
		failing("poststarthook/rbac/bootstrap-roles", "not finished"),
		NamedGroupedCheck("etcd", "etcd", func(*http.Request) error { return nil }),
	}
	mux := install(t, "/readyz", HandlerOptions{}, checks...)
	tests := []struct {
		target   string
		wantCode int
		wantBody string
		nosniff  bool
	}{
		{"/readyz/ping", 200, "ok", false},
		{"/readyz/ping?verbose", 200, "ok", false},
		{"/readyz/etcd?exclude=etcd", 200, "ok", false},
		{"/readyz/shutdown", 500, "internal server error: process is shutting down\n", true},
		{"/readyz/shutdown?exclude=shutdown", 500, "internal server error: process is shutting down\n", true},
		{"/readyz/shutdown?verbose", 500, "internal server error: process is shutting down\n", true},
		{"/readyz/poststarthook/rbac/bootstrap-roles", 500, "internal server error: not finished\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			got := serve(t, mux, http.MethodGet, tc.target)
			if got.code != tc.wantCode || got.body != tc.wantBody {
				t.Errorf("got %d %q, want %d %q", got.code, got.body, tc.wantCode, tc.wantBody)
			}
			if got, want := got.header.Get("Content-Type"), "text/plain; charset=utf-8"; got != want {
				t.Errorf("Content-Type: got %q, want %q", got, want)
			}
			want := ""
			if tc.nosniff {
				want = "nosniff"
			}
			if got := got.header.Get("X-Content-Type-Options"); got != want {
				t.Errorf("X-Content-Type-Options: got %q, want %q", got, want)
			}
		})
	}
}

// TestRouting covers health.md 1 and 4: exact paths only.
func TestRouting(t *testing.T) {
	mux := install(t, "/readyz", HandlerOptions{}, PingHealthz, passing("poststarthook/rbac/bootstrap-roles"))
	var got []string
	for p := range mux {
		got = append(got, p)
	}
	slices.Sort(got)
	want := []string{"/readyz", "/readyz/ping", "/readyz/poststarthook/rbac/bootstrap-roles"}
	if !slices.Equal(got, want) {
		t.Errorf("installed paths: got %q, want %q", got, want)
	}

	empty := install(t, "/livez", HandlerOptions{})
	if _, ok := empty["/livez/ping"]; !ok || len(empty) != 2 {
		t.Errorf("no checks: got %d paths, want /livez and /livez/ping", len(empty))
	}
}

// TestDuplicateNames: both run on the aggregate path, the single path is
// installed once (a literal mux would panic on a second registration).
func TestDuplicateNames(t *testing.T) {
	mux := install(t, "/healthz", HandlerOptions{}, passing("x"), failing("x", "second"))
	if got := serve(t, mux, "GET", "/healthz"); got.code != 500 ||
		got.body != "[+]x ok\n[-]x failed: reason withheld\nhealthz check failed\n" {
		t.Errorf("aggregate: got %d %q", got.code, got.body)
	}
	if got := serve(t, mux, "GET", "/healthz/x"); got.code != 200 {
		t.Errorf("single: got %d, want 200 (the first check)", got.code)
	}
}

// TestServeMux installs on http.ServeMux (Go 1.22+ patterns) and serves
// over real HTTP: trailing slash and unknown names are not matched, and
// the single-check success content type is the sniffed one.
func TestServeMux(t *testing.T) {
	mux := http.NewServeMux()
	checks := []HealthChecker{
		PingHealthz,
		passing("log"),
		passing("etcd-override-0"),
		passing("poststarthook/rbac/bootstrap-roles"),
		passing("poststarthook/start-apiextensions-informers"),
		failing("shutdown", "process is shutting down"),
	}
	InstallPathHandler(mux, "/readyz", HandlerOptions{Logger: testLogger(io.Discard)}, checks...)
	InstallPathHandler(mux, "/livez", HandlerOptions{Logger: testLogger(io.Discard)}, PingHealthz)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tests := []struct {
		method, target string
		wantCode       int
		wantBody       string
	}{
		{"GET", "/readyz", 500, "[+]ping ok\n[+]log ok\n[+]etcd-override-0 ok\n[+]poststarthook/rbac/bootstrap-roles ok\n" +
			"[+]poststarthook/start-apiextensions-informers ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"},
		{"POST", "/readyz?exclude=shutdown", 200, "ok"},
		{"GET", "/readyz/poststarthook/rbac/bootstrap-roles", 200, "ok"},
		{"GET", "/readyz/shutdown", 500, "internal server error: process is shutting down\n"},
		{"GET", "/livez?verbose", 200, "[+]ping ok\nlivez check passed\n"},
		{"GET", "/readyz/", 404, "404 page not found\n"},
		{"GET", "/readyz/nope", 404, "404 page not found\n"},
		{"GET", "/readyz/poststarthook", 404, "404 page not found\n"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantCode || string(body) != tc.wantBody {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, tc.wantCode, tc.wantBody)
			}
			if tc.wantCode != 404 {
				if got, want := resp.Header.Get("Content-Type"), "text/plain; charset=utf-8"; got != want {
					t.Errorf("Content-Type: got %q, want %q", got, want)
				}
			}
		})
	}
}

// TestFailureReasonLoggedNotShown covers health.md 12.
func TestFailureReasonLoggedNotShown(t *testing.T) {
	var logs syncBuffer
	mux := install(t, "/readyz", HandlerOptions{Logger: testLogger(&logs)},
		PingHealthz, failing("etcd", "secret-etcd-detail"), failing("informer-sync", "2 informers not started yet"))
	got := serve(t, mux, "GET", "/readyz?verbose")
	if strings.Contains(got.body, "secret-etcd-detail") || strings.Contains(got.body, "informers not started") {
		t.Errorf("body leaks a failure reason: %q", got.body)
	}
	out := logs.String()
	for _, want := range []string{"etcd,informer-sync", "secret-etcd-detail", "2 informers not started yet", "endpoint=readyz"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q: missing %q", out, want)
		}
	}
}

// TestFirstSuccess covers health.md 33: called once, on the first 200 of the
// aggregate path only.
func TestFirstSuccess(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	ready := false
	gate := NamedCheck("gate", func(*http.Request) error {
		mu.Lock()
		defer mu.Unlock()
		if !ready {
			return io.EOF
		}
		return nil
	})
	mux := install(t, "/readyz", HandlerOptions{FirstSuccess: func() {
		mu.Lock()
		defer mu.Unlock()
		calls++
	}}, PingHealthz, gate)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return calls
	}

	serve(t, mux, "GET", "/readyz")
	serve(t, mux, "GET", "/readyz/ping")
	if got := count(); got != 0 {
		t.Fatalf("before any aggregate 200: got %d calls, want 0", got)
	}
	// An excluded failure still gives 200 and counts as the first success.
	if got := serve(t, mux, "GET", "/readyz?exclude=gate"); got.code != 200 {
		t.Fatalf("got %d, want 200", got.code)
	}
	if got := count(); got != 1 {
		t.Fatalf("after first 200: got %d calls, want 1", got)
	}
	mu.Lock()
	ready = true
	mu.Unlock()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		})
	}
	wg.Wait()
	if got := count(); got != 1 {
		t.Errorf("after many 200s: got %d calls, want 1", got)
	}
}

// TestInstrument: the hook wraps only the aggregate handler and sees the path.
func TestInstrument(t *testing.T) {
	var seen []string
	opts := HandlerOptions{Instrument: func(path string, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = append(seen, path+" "+r.URL.Path)
			h.ServeHTTP(w, r)
		})
	}}
	mux := install(t, "/healthz", opts, PingHealthz)
	serve(t, mux, "GET", "/healthz")
	serve(t, mux, "GET", "/healthz/ping")
	if want := []string{"/healthz /healthz"}; !slices.Equal(seen, want) {
		t.Errorf("instrumented: got %q, want %q", seen, want)
	}
}
