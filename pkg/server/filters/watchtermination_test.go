package filters

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func TestWatchDrainer(t *testing.T) {
	d := NewWatchDrainer()
	const n = 3
	terminated := make(chan bool, n)
	stubborn := make(chan struct{}) // the stubborn watch returns only when closed
	var returned []time.Time
	var mu sync.Mutex
	h := withInfo(WithWatchTermination(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("stubborn") != "" {
			<-stubborn
			return
		}
		<-r.Context().Done()
		terminated <- WatchTerminated(r.Context())
	}), d, discard()))

	var wg sync.WaitGroup
	serve := func(target string) {
		defer wg.Done()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
		mu.Lock()
		returned = append(returned, time.Now())
		mu.Unlock()
	}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go serve("/api/v1/pods?watch=true")
	}
	wg.Add(1)
	go serve("/api/v1/pods?watch=true&stubborn=1")
	deadline := time.Now().Add(5 * time.Second)
	for d.Active() != n+1 {
		if time.Now().After(deadline) {
			t.Fatalf("got %d active watches, want %d", d.Active(), n+1)
		}
		time.Sleep(time.Millisecond)
	}

	// Non-watch requests are not tracked.
	rec := httptest.NewRecorder()
	withInfo(WithWatchTermination(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := d.Active(); got != n+1 {
			t.Errorf("non-watch: got %d active, want %d", got, n+1)
		}
	}), d, discard())).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/pods", nil))

	grace := 300 * time.Millisecond
	start := time.Now()
	before, after := d.Wait(grace)
	if before != n+1 || after != 1 {
		t.Errorf("got before=%d after=%d, want %d and 1 (the stubborn watch)", before, after, n+1)
	}
	if elapsed := time.Since(start); elapsed < grace {
		t.Errorf("Wait returned after %v with a watch still active, want at least the grace %v", elapsed, grace)
	}
	for i := 0; i < n; i++ {
		if !<-terminated {
			t.Errorf("watch context cause is not ErrWatchTerminated")
		}
	}
	// Returns were paced at max(200, N/G)/s: N-1 gaps of at least 1/200 s.
	mu.Lock()
	if len(returned) != n {
		t.Fatalf("got %d returned watches, want %d", len(returned), n)
	}
	if span := returned[n-1].Sub(returned[0]); span < time.Duration(n-1)*time.Second/MinWatchDrainRate {
		t.Errorf("returns spanned %v, want at least %v", span, time.Duration(n-1)*time.Second/MinWatchDrainRate)
	}
	mu.Unlock()

	// A new watch after the drain began gets the 503, even from loopback.
	rec = httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/v1/pods?watch=true", nil)
	req.Header.Set("User-Agent", "kube-apiserver/v1")
	h.ServeHTTP(rec, req)
	checkShuttingDown503(t, rec)

	close(stubborn)
	wg.Wait()
	if got := d.Active(); got != 0 {
		t.Errorf("got %d active at the end, want 0", got)
	}
}

func TestWatchDrainerEmpty(t *testing.T) {
	d := NewWatchDrainer()
	if before, after := d.Wait(time.Hour); before != 0 || after != 0 {
		t.Errorf("got %d/%d, want 0/0", before, after)
	}
	if before, after := NewWatchDrainer().Wait(0); before != 0 || after != 0 {
		t.Errorf("grace 0: got %d/%d, want 0/0", before, after)
	}
}
