package filters

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

func TestWithMaxInFlightLimit(t *testing.T) {
	tests := []struct {
		name                  string
		nonMutating, mutating int
		method, target        string
		u                     *user.Info
		want                  int
	}{
		{name: "read-only pool full", nonMutating: 1, mutating: 1, method: "GET", target: "/api/v1/pods", want: 429},
		{name: "mutating pool separate", nonMutating: 1, mutating: 1, method: "POST", target: "/api/v1/namespaces/ns/pods", want: 200},
		{name: "read-only unlimited", nonMutating: 0, mutating: 1, method: "GET", target: "/api/v1/pods", want: 200},
		{name: "long-running bypasses", nonMutating: 1, mutating: 1, method: "GET", target: "/api/v1/pods?watch=true", want: 200},
		{name: "system:masters bypasses", nonMutating: 1, mutating: 1, method: "GET", target: "/api/v1/pods",
			u: &user.Info{Name: "admin", Groups: []string{user.SystemPrivileged}}, want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := metrics.New(reg)
			if err != nil {
				t.Fatal(err)
			}
			entered := make(chan struct{})
			release := make(chan struct{})
			limited := WithMaxInFlightLimit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Hold") != "" {
					close(entered)
					<-release
				}
			}), tt.nonMutating, tt.mutating, DefaultLongRunning, m, discard())
			h := withInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				u := tt.u
				if u == nil || r.Header.Get("X-Hold") != "" {
					u = alice
				}
				limited.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
			}))
			// Occupy the read-only slot (if limited) with a held GET.
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := httptest.NewRequest("GET", "/api/v1/pods", nil)
				req.Header.Set("X-Hold", "1")
				h.ServeHTTP(httptest.NewRecorder(), req)
			}()
			<-entered
			if tt.nonMutating > 0 {
				if got := gaugeValue(t, reg, metrics.ReadOnlyKind); got != 1 {
					t.Errorf("got read-only gauge %v while held, want 1", got)
				}
			}

			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
			close(release)
			wg.Wait()
			if rec.Code != tt.want {
				t.Fatalf("got %d, want %d", rec.Code, tt.want)
			}
			if tt.want == 429 {
				if got := rec.Header().Get("Retry-After"); got != "1" {
					t.Errorf("got Retry-After %q, want 1", got)
				}
				if got := rec.Body.String(); got != "Too many requests, please try again later.\n" {
					t.Errorf("got body %q", got)
				}
			}
			if got := gaugeValue(t, reg, metrics.ReadOnlyKind); got != 0 {
				t.Errorf("got read-only gauge %v after, want 0", got)
			}
		})
	}
}

func TestWithMaxInFlightLimitUnlimited(t *testing.T) {
	inner := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	if h := WithMaxInFlightLimit(inner, 0, 0, DefaultLongRunning, nil, nil); h == nil {
		t.Fatal("got nil handler")
	}
	rec := httptest.NewRecorder()
	withInfo(WithMaxInFlightLimit(inner, 0, 0, DefaultLongRunning, nil, nil)).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/pods", nil))
	if rec.Code != 200 {
		t.Errorf("got %d, want 200", rec.Code)
	}
}

func gaugeValue(t *testing.T, reg *prometheus.Registry, kind string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "apiserver_current_inflight_requests" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "request_kind" && l.GetValue() == kind {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no gauge for %s", kind)
	return 0
}
