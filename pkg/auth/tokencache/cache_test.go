package tokencache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

// newFakeClock is the cache's clock, moved by the test.
func newFakeClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
}

// counting is a wrapped authenticator: good tokens authenticate (with an
// annotation and a warning), "bad" is an error, anything else no opinion.
type counting struct {
	calls atomic.Int32
}

func (a *counting) AuthenticateToken(ctx context.Context, token string) (*user.Info, []string, bool, error) {
	a.calls.Add(1)
	switch {
	case strings.HasPrefix(token, "good"):
		auds, _ := authenticator.AudiencesFrom(ctx)
		audit.AddAnnotation(ctx, "example.com/token", token)
		warning.AddWarning(ctx, "warned about "+token)
		return &user.Info{Name: token}, auds, true, nil
	case token == "bad":
		audit.AddAnnotation(ctx, "example.com/refused", token)
		warning.AddWarning(ctx, "refused")
		return nil, nil, false, errors.New("bad token")
	}
	return nil, nil, false, nil
}

type warnings struct {
	mu    sync.Mutex
	texts []string
}

func (w *warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// request is the context of one request: audit context and warnings.
func request(auds ...string) (context.Context, *warnings) {
	w := &warnings{}
	ctx := warning.WithRecorder(audit.WithContext(context.Background()), w)
	if auds != nil {
		ctx = authenticator.WithAudiences(ctx, auds)
	}
	return ctx, w
}

func TestCachesSuccessForTTL(t *testing.T) {
	clock := newFakeClock()
	inner := &counting{}
	c := New(inner, Config{SuccessTTL: 10 * time.Second, CacheErrors: true, Now: clock.Now})
	for i, tc := range []struct {
		step      time.Duration
		wantCalls int32
	}{
		{0, 1},                                // first use: fetched
		{0, 1},                                // hit
		{10*time.Second - time.Nanosecond, 1}, // still good just before the TTL
		{time.Nanosecond, 2},                  // expired at exactly the TTL: fetched again
		{5 * time.Second, 2},                  // the new record is good from its fill
	} {
		clock.Step(tc.step)
		ctx, w := request()
		u, _, ok, err := c.AuthenticateToken(ctx, "good-1")
		if err != nil || !ok || u.Name != "good-1" {
			t.Fatalf("step %d: got (%v, %v, %v), want good-1 authenticated", i, u, ok, err)
		}
		if got := inner.calls.Load(); got != tc.wantCalls {
			t.Errorf("step %d: inner called %d times, want %d", i, got, tc.wantCalls)
		}
		// Every request, hit or miss, gets the annotation and warning.
		if got, want := audit.FromContext(ctx).Annotations(), map[string]string{"example.com/token": "good-1"}; !maps.Equal(got, want) {
			t.Errorf("step %d: annotations %v, want %v", i, got, want)
		}
		if want := []string{"warned about good-1"}; !slices.Equal(w.texts, want) {
			t.Errorf("step %d: warnings %q, want %q", i, w.texts, want)
		}
	}
}

func TestFailuresAndErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cacheErrors bool
		failureTTL  time.Duration
		token       string
		wantCalls   int32
	}{
		{"unauthenticated, no failure TTL", true, 0, "unknown", 3},
		{"error, no failure TTL", true, 0, "bad", 3},
		{"unauthenticated, failure TTL", true, time.Second, "unknown", 1},
		{"error, failure TTL", true, time.Second, "bad", 1},
		{"error, failure TTL, errors not cached", false, time.Second, "bad", 3},
		{"unauthenticated, failure TTL, errors not cached", false, time.Second, "unknown", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &counting{}
			c := New(inner, Config{SuccessTTL: time.Minute, FailureTTL: tc.failureTTL, CacheErrors: tc.cacheErrors, Now: newFakeClock().Now})
			for range 3 {
				ctx, w := request()
				u, auds, ok, err := c.AuthenticateToken(ctx, tc.token)
				if ok || u != nil || auds != nil {
					t.Fatalf("got (%v, %v, %v), want not authenticated", u, auds, ok)
				}
				if (tc.token == "bad") != (err != nil) {
					t.Fatalf("err %v, want one only for the bad token", err)
				}
				// A failure's annotations and warnings are dropped.
				if a := audit.FromContext(ctx).Annotations(); a != nil || w.texts != nil {
					t.Errorf("a failure added annotations %v and warnings %q", a, w.texts)
				}
			}
			if got := inner.calls.Load(); got != tc.wantCalls {
				t.Errorf("inner called %d times, want %d", got, tc.wantCalls)
			}
		})
	}
}

func TestAudiencesArePartOfTheKey(t *testing.T) {
	inner := &counting{}
	c := New(inner, Config{SuccessTTL: time.Minute, Now: newFakeClock().Now})
	for i, tc := range []struct {
		auds      []string
		wantCalls int32
	}{
		{nil, 1},                // none requested
		{[]string{}, 2},         // an empty list is not "none requested"
		{[]string{"a"}, 3},      // one audience
		{[]string{"a", "b"}, 4}, // another list
		{[]string{"ab"}, 5},     // not the same as a, b
		{[]string{"a"}, 5},      // hit
		{nil, 5},                // hit
		{[]string{"b", "a"}, 6}, // order matters, as upstream's
	} {
		ctx, _ := request(tc.auds...)
		if tc.auds != nil && len(tc.auds) == 0 {
			ctx = authenticator.WithAudiences(ctx, []string{})
		}
		_, auds, ok, err := c.AuthenticateToken(ctx, "good")
		if !ok || err != nil {
			t.Fatalf("step %d: not authenticated: %v", i, err)
		}
		if !slices.Equal(auds, tc.auds) {
			t.Errorf("step %d: audiences %q, want the request's %q", i, auds, tc.auds)
		}
		if got := inner.calls.Load(); got != tc.wantCalls {
			t.Errorf("step %d: inner called %d times, want %d", i, got, tc.wantCalls)
		}
	}
}

func TestKeyKeepsNoToken(t *testing.T) {
	a := New(&counting{}, Config{SuccessTTL: time.Minute})
	b := New(&counting{}, Config{SuccessTTL: time.Minute})
	token := strings.Repeat("secret-token-", 50) // longer than the scratch buffer
	ka, kb := a.key(token, []string{"aud"}, true), b.key(token, []string{"aud"}, true)
	if len(ka) != 32 {
		t.Errorf("key is %d bytes, want an HMAC-SHA256's 32", len(ka))
	}
	if strings.Contains(ka, "secret") || strings.Contains(ka, "aud") {
		t.Errorf("key %q contains the token or audience", ka)
	}
	if ka == kb {
		t.Error("two caches hash a token to the same key: the HMAC key is not random per cache")
	}
	if ka != a.key(token, []string{"aud"}, true) {
		t.Error("one cache hashes a token to two keys")
	}
	if ka == a.key(token+"x", []string{"aud"}, true) || ka == a.key(token, []string{"aud"}, false) {
		t.Error("different inputs hash to the same key")
	}
	// Length prefixes keep boundaries apart.
	if a.key("xy", []string{"z"}, true) == a.key("x", []string{"yz"}, true) {
		t.Error(`"xy"+"z" and "x"+"yz" hash to the same key`)
	}
}

// blockingInner authenticates "good" once released, counting calls and
// recording whether its context was cancelled.
type blockingInner struct {
	calls     atomic.Int32
	release   chan struct{}
	cancelled atomic.Bool
	panics    bool
}

func (a *blockingInner) AuthenticateToken(ctx context.Context, token string) (*user.Info, []string, bool, error) {
	a.calls.Add(1)
	<-a.release
	if ctx.Err() != nil {
		a.cancelled.Store(true)
	}
	if a.panics {
		panic("boom")
	}
	return &user.Info{Name: token}, nil, true, nil
}

// value is the value of a counter or gauge.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}

// waitGauge waits until the active_fetch_count series of status is want
// (no deadline of its own: the test's timeout is the bound).
func waitGauge(t *testing.T, m *Metrics, status string, want float64) {
	t.Helper()
	for value(m.activeFetches.WithLabelValues(status)) != want {
		time.Sleep(time.Millisecond)
	}
}

func TestConcurrentMissesShareOneCall(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	inner := &blockingInner{release: make(chan struct{})}
	c := New(inner, Config{SuccessTTL: time.Minute, Now: newFakeClock().Now, Metrics: m})
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			u, _, ok, err := c.AuthenticateToken(context.Background(), "good")
			if err != nil || !ok || u.Name != "good" {
				errs <- fmt.Errorf("got (%v, %v, %v)", u, ok, err)
			}
		})
	}
	waitGauge(t, m, blocked, n)
	waitGauge(t, m, inFlight, 1)
	close(inner.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := inner.calls.Load(); got != 1 {
		t.Errorf("inner called %d times for %d concurrent misses, want 1", got, n)
	}
	if got := value(m.requests.WithLabelValues(miss)); got != n {
		t.Errorf("request_total{miss} = %v, want %d", got, n)
	}
	if got := value(m.fetches.WithLabelValues(fetchOK)); got != 1 {
		t.Errorf("fetch_total{ok} = %v, want 1", got)
	}
	waitGauge(t, m, blocked, 0)
	waitGauge(t, m, inFlight, 0)
}

func TestCancelledRequestDoesNotPoisonTheCache(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	inner := &blockingInner{release: make(chan struct{})}
	c := New(inner, Config{SuccessTTL: time.Minute, Now: newFakeClock().Now, Metrics: m})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, ok, err := c.AuthenticateToken(ctx, "good")
		if ok {
			err = errors.New("authenticated after its request was cancelled")
		}
		done <- err
	}()
	waitGauge(t, m, inFlight, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: err %v, want context.Canceled", err)
	}
	// The shared call goes on, on its own context, and fills the cache.
	close(inner.release)
	waitGauge(t, m, inFlight, 0)
	u, _, ok, err := c.AuthenticateToken(context.Background(), "good")
	if err != nil || !ok || u.Name != "good" {
		t.Fatalf("after the cancellation: got (%v, %v, %v), want good authenticated", u, ok, err)
	}
	if got := inner.calls.Load(); got != 1 {
		t.Errorf("inner called %d times, want 1 (the cancelled request's call filled the cache)", got)
	}
	if inner.cancelled.Load() {
		t.Error("the shared call's context was cancelled with the request's")
	}
}

func TestPanicIsAnInternalErrorNotCached(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	inner := &blockingInner{release: make(chan struct{}), panics: true}
	close(inner.release)
	c := New(inner, Config{SuccessTTL: time.Minute, FailureTTL: time.Minute, CacheErrors: true, Now: newFakeClock().Now, Metrics: m,
		Logger: slog.New(slog.DiscardHandler)})
	for range 2 {
		_, _, ok, err := c.AuthenticateToken(context.Background(), "good")
		if ok || !apierrors.IsInternalError(err) {
			t.Fatalf("got (%v, %v), want an internal error", ok, err)
		}
	}
	// Not cached even with a failure TTL: the panic skips the caching,
	// as upstream's.
	if got := inner.calls.Load(); got != 2 {
		t.Errorf("inner called %d times, want 2", got)
	}
	if got := value(m.fetches.WithLabelValues(fetchError)); got != 2 {
		t.Errorf("fetch_total{error} = %v, want 2", got)
	}
}

func TestStoreDropsExpiredRecords(t *testing.T) {
	clock := newFakeClock()
	s := newStore(clock.Now)
	for i := range 100 {
		s.set(fmt.Sprint("a", i), &record{}, time.Second)
	}
	s.set("long", &record{ok: true}, time.Hour)
	clock.Step(time.Second)
	s.set("b", &record{}, time.Second) // collects the a's of every stripe it visits
	if _, ok := s.get("a0"); ok {
		t.Error("expired record returned")
	}
	if r, ok := s.get("long"); !ok || !r.ok {
		t.Error("unexpired record not returned")
	}
	// Re-setting a key keeps the newer record when the older one's expiry
	// comes due.
	s.set("k", &record{}, time.Second)
	s.set("k", &record{ok: true}, time.Hour)
	clock.Step(time.Second)
	for i := range 200 {
		s.set(fmt.Sprint("c", i), &record{}, time.Hour)
	}
	if r, ok := s.get("k"); !ok || !r.ok {
		t.Error("re-set record dropped with its older expiry")
	}
	// The c's visited every stripe: only unexpired records are left
	// (long, k and the c's; a0..a99 and b have been collected).
	if n := s.len(); n != 200+2 {
		t.Errorf("store holds %d records, want %d: the expired ones collected", n, 200+2)
	}
}

// BenchmarkHit is one authentication served from the cache (key, lookup,
// replay of one annotation and one warning), without a request context's
// audit and warnings (a request's cost of those is the chain's).
func BenchmarkHit(b *testing.B) {
	c := New(&counting{}, Config{SuccessTTL: time.Hour})
	token := "good" + strings.Repeat("t", 900) // about a bound token's length
	ctx := context.Background()
	if _, _, ok, _ := c.AuthenticateToken(ctx, token); !ok {
		b.Fatal("not authenticated")
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok, _ := c.AuthenticateToken(ctx, token); !ok {
			b.Fatal("not authenticated")
		}
	}
}
