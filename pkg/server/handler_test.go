package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// UpdateREST switches several REST roots in one step: a request never
// finds one of them without the other.
func TestUpdateRESTIsOneStep(t *testing.T) {
	h := newAPIServerHandler("test", http.NotFoundHandler())
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	code := func(path string) int {
		rec := httptest.NewRecorder()
		h.Director.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	done := make(chan struct{})
	torn := make(chan string, 1)
	go func() {
		defer close(torn)
		for {
			select {
			case <-done:
				return
			default:
			}
			// v2 is added with v1 and removed with it: v1 answering then
			// v2 not found (or the reverse, read in the other order) means
			// a reader saw half of a change.
			roots := *h.roots.Load()
			_, a := roots["/apis/example.com/v1"]
			_, b := roots["/apis/example.com/v2"]
			if a != b {
				torn <- "one root without the other"
				return
			}
		}
	}()
	for range 500 {
		h.UpdateREST(map[string]http.Handler{"/apis/example.com/v1": ok, "/apis/example.com/v2": ok}, nil)
		h.UpdateREST(nil, []string{"/apis/example.com/v1", "/apis/example.com/v2"})
	}
	close(done)
	if msg, ok := <-torn; ok {
		t.Fatal(msg)
	}

	h.UpdateREST(map[string]http.Handler{"/apis/example.com/v1": ok, "/apis/example.com/v2": ok}, nil)
	if c1, c2 := code("/apis/example.com/v1/widgets"), code("/apis/example.com/v2"); c1 != http.StatusOK || c2 != http.StatusOK {
		t.Fatalf("got %d and %d, want 200 for both roots", c1, c2)
	}
	// Set and remove together: v1 replaced by v3.
	h.UpdateREST(map[string]http.Handler{"/apis/example.com/v3": ok}, []string{"/apis/example.com/v1"})
	if c1, c3 := code("/apis/example.com/v1"), code("/apis/example.com/v3"); c1 != http.StatusNotFound || c3 != http.StatusOK {
		t.Fatalf("got v1 %d and v3 %d, want 404 and 200", c1, c3)
	}
}
