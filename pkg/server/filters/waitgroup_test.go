package filters

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSafeWaitGroup(t *testing.T) {
	var g SafeWaitGroup
	if err := g.Add(2); err != nil {
		t.Fatal(err)
	}
	drained := g.StartWait()
	if err := g.Add(1); err != ErrWaitGroupClosed {
		t.Errorf("Add after Wait: got %v, want ErrWaitGroupClosed", err)
	}
	g.Done()
	select {
	case <-drained:
		t.Fatal("drained with one still counted")
	default:
	}
	g.Done()
	<-drained
	g.Wait() // returns at once now
	if got := g.Count(); got != 0 {
		t.Errorf("got count %d, want 0", got)
	}
	var empty SafeWaitGroup
	empty.Wait() // nothing counted: returns
}

func TestSafeWaitGroupConcurrent(t *testing.T) {
	var g SafeWaitGroup
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g.Add(1) == nil {
				g.Done()
			}
		}()
	}
	g.Wait()
	wg.Wait()
	if got := g.Count(); got != 0 {
		t.Errorf("got count %d, want 0", got)
	}
}

func TestWithWaitGroup(t *testing.T) {
	tests := []struct {
		name        string
		path, ua    string
		waiting     bool
		wantServed  bool
		wantCounted bool
	}{
		{name: "counted", path: "/api/v1/pods", wantServed: true, wantCounted: true},
		{name: "long-running not counted", path: "/api/v1/pods?watch=true", wantServed: true},
		{name: "exempt counted before shutdown", path: "/healthz", wantServed: true, wantCounted: true},
		{name: "rejected after wait", path: "/api/v1/pods", waiting: true},
		{name: "exempt path served uncounted", path: "/readyz", waiting: true, wantServed: true},
		{name: "loopback served uncounted", path: "/api/v1/pods", ua: "kube-apiserver/v1", waiting: true, wantServed: true},
		{name: "long-running served after wait", path: "/api/v1/pods?watch=1", waiting: true, wantServed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g SafeWaitGroup
			if tt.waiting {
				g.StartWait()
			}
			served, count := false, -1
			h := withInfo(WithWaitGroup(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				served, count = true, g.Count()
			}), DefaultLongRunning, &g, discard()))
			req := httptest.NewRequest("GET", tt.path, nil)
			req.Header.Set("User-Agent", tt.ua)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if served != tt.wantServed {
				t.Fatalf("got served=%v, want %v", served, tt.wantServed)
			}
			if served {
				if want := map[bool]int{true: 1, false: 0}[tt.wantCounted]; count != want {
					t.Errorf("got count %d while serving, want %d", count, want)
				}
				return
			}
			checkShuttingDown503(t, rec)
		})
	}
}

func checkShuttingDown503(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != 503 {
		t.Errorf("got %d, want 503", rec.Code)
	}
	for k, v := range map[string]string{"Retry-After": "1", "Content-Type": "application/json", "X-Content-Type-Options": "nosniff"} {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("got %s %q, want %q", k, got, v)
		}
	}
	var st metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Kind != "Status" || st.Status != "Failure" || st.Reason != metav1.StatusReasonServiceUnavailable ||
		st.Message != "apiserver is shutting down" || st.Code != 503 {
		t.Errorf("got %+v, want ServiceUnavailable Status 'apiserver is shutting down'", st)
	}
}
