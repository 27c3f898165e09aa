package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func serveName(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(name)) })
}

func muxGet(m *PathMux, path string) (int, string) {
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// TestPathMuxChangesShowAtOnce checks that each registration, removal and
// not-found handler is what the next request sees, also while other
// requests are being served.
func TestPathMuxChangesShowAtOnce(t *testing.T) {
	m := NewPathMux("test")
	if code, _ := muxGet(m, "/a"); code != http.StatusNotFound {
		t.Fatalf("empty mux: got %d, want 404", code)
	}
	m.Handle("/a", serveName("a"))
	m.HandlePrefix("/p/", serveName("p"))
	m.UnlistedHandlePrefix("/p/q/", serveName("pq"))
	for path, want := range map[string]string{"/a": "a", "/p/x": "p", "/p/q/x": "pq"} {
		if code, body := muxGet(m, path); code != http.StatusOK || body != want {
			t.Errorf("%s: got %d %q, want 200 %q", path, code, body, want)
		}
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if code, body := muxGet(m, "/a"); code != http.StatusOK || body != "a" {
				t.Errorf("/a while registering: got %d %q", code, body)
				return
			}
		}
	})
	for i := range 200 {
		p := fmt.Sprintf("/n/%d", i)
		m.Handle(p, serveName(p))
		if code, body := muxGet(m, p); code != http.StatusOK || body != p {
			t.Errorf("%s right after Handle: got %d %q", p, code, body)
		}
	}
	close(stop)
	wg.Wait()

	m.Unregister("/p/q/")
	if _, body := muxGet(m, "/p/q/x"); body != "p" {
		t.Errorf("/p/q/x after Unregister(/p/q/): got %q, want p", body)
	}
	m.NotFoundHandler(serveName("none"))
	if _, body := muxGet(m, "/zzz"); body != "none" {
		t.Errorf("not found handler: got %q", body)
	}
	if got := m.ListedPaths(); len(got) != 202 || got[0] != "/a" {
		t.Errorf("listed paths: got %d, first %v", len(got), got[:1])
	}
}
