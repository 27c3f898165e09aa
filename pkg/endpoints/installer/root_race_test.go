package installer

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Concurrent GETs of the group-version root must not race on the shared
// APIResourceList (the encoder sets its TypeMeta): run under -race.
func TestConcurrentRootDiscovery(t *testing.T) {
	h := fuzzHandler(t)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				rr := httptest.NewRecorder()
				h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/api/v1", nil))
				if rr.Code != http.StatusOK {
					t.Errorf("GET /api/v1: %d %s", rr.Code, rr.Body.String())
					return
				}
			}
		}()
	}
	wg.Wait()
}
