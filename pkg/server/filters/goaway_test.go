package filters

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func TestProbabilisticGoaway(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, tc := range []struct {
		name   string
		chance float64
		roll   float64
		proto  int
		want   string
	}{
		{"h2, rolled under the chance", 0.02, 0.01, 2, "close"},
		{"h2, rolled over the chance", 0.02, 0.5, 2, ""},
		{"http/1.1 never", 0.02, 0.0, 1, ""},
		{"chance 0 never", 0, 0.0, 2, ""},
	} {
		h := WithProbabilisticGoaway(ok, tc.chance, func() float64 { return tc.roll })
		r := httptest.NewRequest(http.MethodGet, "/api", nil)
		r.ProtoMajor = tc.proto
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Header().Get("Connection"); got != tc.want {
			t.Errorf("%s: got Connection %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Over real HTTP/2, a response with Connection: close ends the
// connection (GOAWAY): the next request is served on a new one. The
// test records the connection that served each request rather than
// counting dials: a client that picked the old connection just before
// the GOAWAY arrived retries on a fresh one, which is an extra dial but
// still one request per connection.
func TestProbabilisticGoawayOverHTTP2(t *testing.T) {
	var mu sync.Mutex
	served := map[string]int{}
	inner := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served[r.RemoteAddr]++
		mu.Unlock()
	})
	srv := httptest.NewUnstartedServer(WithProbabilisticGoaway(inner, 0.02, func() float64 { return 0 }))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()
	for range 3 {
		res, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if res.ProtoMajor != 2 {
			t.Fatalf("got HTTP/%d, want HTTP/2", res.ProtoMajor)
		}
		res.Body.Close()
	}
	srv.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(served) != 3 {
		t.Errorf("3 requests were served on %d connections %v, want 3 (each closed after its response)", len(served), served)
	}
}
