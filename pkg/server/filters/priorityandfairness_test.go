package filters

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/bootstrap"
	"github.com/kapi-dev/kapi/pkg/storage/watchinit"
)

// apfEngine is an engine with upstream's default configuration (UIDs
// "fs-<name>" and "pl-<name>") on seats seats.
func apfEngine(seats int) *flowcontrol.Controller {
	fss := append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...)
	pls := append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...)
	for _, fs := range fss {
		fs.UID = types.UID("fs-" + fs.Name)
	}
	for _, pl := range pls {
		pl.UID = types.UID("pl-" + pl.Name)
	}
	c := flowcontrol.New(flowcontrol.Options{ServerConcurrencyLimit: seats})
	c.Apply(fss, pls)
	return c
}

// apfChain is RequestInfo, a fixed user, APF and h.
func apfChain(c *flowcontrol.Controller, u *user.Info, count ObjectCounter, h http.Handler) http.Handler {
	apf := WithPriorityAndFairness(h, PriorityAndFairness{Controller: c, ObjectCount: count}, DefaultLongRunning, discard())
	return withInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apf.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
	}))
}

// Every classified response names its schema and level; a rejected one is
// upstream's 429 with Retry-After: 1.
func TestPriorityAndFairnessHeadersAnd429(t *testing.T) {
	// 10 seats: catch-all's nominal is ceil(10*5/245) = 1, its current
	// limit what the adjustment at Apply lent it; it rejects past that.
	c := apfEngine(10)
	limit := c.Levels()["catch-all"].CurrentCL
	nobody := &user.Info{Name: "nobody"} // in no group: catch-all
	entered, release := make(chan struct{}, limit), make(chan struct{})
	h := apfChain(c, nobody, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Hold") != "" {
			entered <- struct{}{}
			<-release
		}
	}))
	var wg sync.WaitGroup
	for range limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("GET", "/api/v1/pods", nil)
			req.Header.Set("X-Hold", "1")
			h.ServeHTTP(httptest.NewRecorder(), req)
		}()
	}
	for range limit {
		<-entered
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/pods", nil))
	close(release)
	wg.Wait()
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" || rec.Body.String() != TooManyRequestsMessage+"\n" {
		t.Errorf("over catch-all's limit: %d Retry-After %q body %q", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
	if rec.Header().Get(FlowSchemaUIDHeader) != "fs-catch-all" || rec.Header().Get(PriorityLevelUIDHeader) != "pl-catch-all" {
		t.Errorf("rejected response headers %v", rec.Header())
	}
	rec = httptest.NewRecorder()
	apfChain(c, alice, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/pods", nil))
	if rec.Code != http.StatusOK || rec.Header().Get(FlowSchemaUIDHeader) != "fs-global-default" || rec.Header().Get(PriorityLevelUIDHeader) != "pl-global-default" {
		t.Errorf("alice: %d %v", rec.Code, rec.Header())
	}
	// Health checks are exempt (probes), whoever asks.
	rec = httptest.NewRecorder()
	apfChain(c, &user.Info{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).
		ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Header().Get(FlowSchemaUIDHeader) != "fs-probes" || rec.Header().Get(PriorityLevelUIDHeader) != "pl-exempt" {
		t.Errorf("/readyz: %v", rec.Header())
	}
}

// Exempt requests are never queued: a system:masters flood on a server of
// one seat all executes at once.
func TestPriorityAndFairnessExemptNeverQueued(t *testing.T) {
	c := apfEngine(1)
	admin := &user.Info{Name: "admin", Groups: []string{user.SystemPrivileged, user.AllAuthenticated}}
	var inside sync.WaitGroup
	inside.Add(50)
	release := make(chan struct{})
	h := apfChain(c, admin, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside.Done()
		<-release
	}))
	var wg sync.WaitGroup
	codes := make(chan int, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/namespaces/ns/configmaps", strings.NewReader("{}")))
			codes <- rec.Code
		}()
	}
	inside.Wait() // all 50 executing together
	l := c.Levels()["exempt"]
	close(release)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Errorf("exempt request: %d", code)
		}
	}
	if l.Executing != 50 || l.Waiting != 0 {
		t.Errorf("exempt level while the flood executed: %+v", l)
	}
}

// A long list counts several seats: one per 100 objects, at most 10; a
// limit without selectors bounds it.
func TestListSeats(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	count := func(n int64) ObjectCounter {
		return func(gr schema.GroupResource) (int64, bool) { return n, gr == pods }
	}
	for _, tc := range []struct {
		target string
		n      int64
		want   int
	}{
		{"/api/v1/pods", 0, 1},
		{"/api/v1/pods", 99, 1},
		{"/api/v1/pods", 101, 2},
		{"/api/v1/pods", 550, 6},
		{"/api/v1/pods", 100000, 10},
		{"/api/v1/pods?limit=100", 5000, 1},
		{"/api/v1/pods?limit=500", 5000, 5},
		{"/api/v1/pods?limit=100&labelSelector=a%3Db", 5000, 10},
	} {
		if got := ListSeats(httptest.NewRequest("GET", tc.target, nil), pods, count(tc.n)); got != tc.want {
			t.Errorf("%s with %d objects: %d seats, want %d", tc.target, tc.n, got, tc.want)
		}
	}
	if got := ListSeats(httptest.NewRequest("GET", "/api/v1/pods", nil), pods, nil); got != 1 {
		t.Errorf("unknown count: %d", got)
	}
	// Through the filter: the executing list holds 6 seats of
	// global-default.
	c := apfEngine(600)
	entered, release := make(chan struct{}), make(chan struct{})
	h := apfChain(c, alice, count(550), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods", nil))
	}()
	<-entered
	if s := c.Levels()["global-default"].SeatsInUse; s != 6 {
		t.Errorf("a list of 550 objects holds %d seats, want 6", s)
	}
	close(release)
	<-done
}

// A watch holds its seat until storage signals that its initial events
// are sent (watchinit.Initialized), not merely until its response starts;
// then the seat is free while the watch goes on.
func TestWatchHoldsSeatUntilInitialized(t *testing.T) {
	c := apfEngine(600)
	responding, initialized, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	step := make(chan struct{})
	h := apfChain(c, alice, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		close(responding)
		<-step // the initial events being sent
		watchinit.Initialized(r.Context())
		close(initialized)
		<-stop
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods?watch=true", nil))
	}()
	<-responding
	if s := c.Levels()["global-default"].SeatsInUse; s != 1 {
		t.Errorf("seats held by a watch sending its initial events: %d, want 1", s)
	}
	close(step)
	<-initialized
	if s := c.Levels()["global-default"].SeatsInUse; s != 0 {
		t.Errorf("seats held by an initialized watch: %d, want 0", s)
	}
	close(stop)
	<-done
}

// A watch that ends without reaching storage (an error answered before)
// gives its seat back when its handler returns.
func TestWatchWithoutInitializationReleasesSeatAtReturn(t *testing.T) {
	c := apfEngine(600)
	h := apfChain(c, alice, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods?watch=true", nil))
	if s := c.Levels()["global-default"].SeatsInUse; s != 0 {
		t.Errorf("seats held after a watch handler returned: %d, want 0", s)
	}
}

// A mutation of a resource with 10 watches or more holds ceil(watches/10)
// seats after it finished; otherwise one seat only.
func TestMutatingWidth(t *testing.T) {
	if w := mutatingWidth(0); w != (flowcontrol.Width{Seats: 1}) {
		t.Errorf("no watches: %+v", w)
	}
	if w := mutatingWidth(9); w != (flowcontrol.Width{Seats: 1}) {
		t.Errorf("9 watches (under upstream's 10 per seat): %+v", w)
	}
	if w := mutatingWidth(25); w != (flowcontrol.Width{Seats: 1, FinalSeats: 3, AdditionalLatency: 5 * time.Millisecond}) {
		t.Errorf("25 watches: %+v", w)
	}
	if w := mutatingWidth(200); w != (flowcontrol.Width{Seats: 1, FinalSeats: 10, AdditionalLatency: 10 * time.Millisecond}) {
		t.Errorf("200 watches: %+v", w)
	}
}

// Long-running requests other than watches are not limited by APF.
func TestPriorityAndFairnessLongRunningBypass(t *testing.T) {
	c := apfEngine(600)
	rec := httptest.NewRecorder()
	apfChain(c, alice, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).
		ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/namespaces/ns/pods/p/exec", nil))
	if rec.Header().Get(FlowSchemaUIDHeader) != "" {
		t.Errorf("exec was classified: %v", rec.Header())
	}
	if d := c.Levels()["global-default"].Dispatched; d != 0 {
		t.Errorf("dispatched %d", d)
	}
}
