package filters

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer/interim"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

const chainTimeout = 200 * time.Millisecond

var bearerGood = http.Header{"Authorization": {"Bearer good"}}

// chainAPI is the api handler at the end of the test chains.
type chainAPI struct {
	entered     chan struct{} // receives when /hold is entered
	holdRelease chan struct{} // closing releases /hold
	release     chan struct{} // closing releases /slow
}

func newChainAPI() *chainAPI {
	return &chainAPI{entered: make(chan struct{}, 10), holdRelease: make(chan struct{}), release: make(chan struct{})}
}

func (a *chainAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/api/v1/namespaces/ns/pods/ok", func(w http.ResponseWriter, r *http.Request) {
		warning.AddWarning(r.Context(), "careful")
		w.Header().Set("X-Incomplete", fmt.Sprint(request.MuxIncomplete(r.Context())))
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("/api/v1/namespaces/ns/pods/panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	mux.HandleFunc("/api/v1/namespaces/ns/pods/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		<-a.release
	})
	mux.HandleFunc("/api/v1/namespaces/ns/pods/hold", func(w http.ResponseWriter, r *http.Request) {
		a.entered <- struct{}{}
		<-a.holdRelease
		_, _ = io.WriteString(w, "held")
	})
	mux.HandleFunc("/api/v1/pods", func(w http.ResponseWriter, r *http.Request) { // a watch
		select {
		case <-time.After(2 * chainTimeout):
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "watched")
	})
	return mux
}

func statusOf(t *testing.T, body string) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	return st
}

func TestBuildChain(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			api := newChainAPI()
			log := newAuditLog(t)
			reg := prometheus.NewRegistry()
			m, err := metrics.New(reg)
			if err != nil {
				t.Fatal(err)
			}
			cfg := ChainConfig{
				Logger:                         discard(),
				MuxAndDiscoveryComplete:        make(chan struct{}),
				NonLongRunningRequestWaitGroup: &SafeWaitGroup{},
				WatchDrainer:                   NewWatchDrainer(),
				RequestTimeout:                 chainTimeout,
				Authenticator:                  tokenAuthenticator{"good": alice},
				AuditBackend:                   log,
				AuditPolicy:                    audit.MetadataPolicy(),
				MaxRequestsInFlight:            1,
				MaxMutatingRequestsInFlight:    1,
				Authorizer:                     interim.Authorizer{},
				Metrics:                        m,
			}
			srv, c := startTLS(t, BuildChain(api.handler(), cfg), proto.http2)
			t.Cleanup(func() { close(api.release) })
			u := srv.URL

			// Authenticated request: every header filter did its job.
			resp, body := get(t, c, u+"/api/v1/namespaces/ns/pods/ok", bearerGood)
			if resp.StatusCode != 200 || body != "ok" {
				t.Fatalf("ok: got %d %q", resp.StatusCode, body)
			}
			if _, err := uuid.Parse(resp.Header.Get("Audit-Id")); err != nil {
				t.Errorf("got Audit-Id %q, want a UUID", resp.Header.Get("Audit-Id"))
			}
			for k, v := range map[string]string{"Cache-Control": "no-cache, private", "Warning": `299 - "careful"`, "X-Incomplete": "true"} {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("ok: got %s %q, want %q", k, got, v)
				}
			}

			// Authentication, then authorization.
			resp, body = get(t, c, u+"/api/v1/namespaces/ns/pods/ok", http.Header{"Authorization": {"Bearer bad"}})
			if st := statusOf(t, body); resp.StatusCode != 401 || st.Reason != metav1.StatusReasonUnauthorized {
				t.Errorf("bad token: got %d %s", resp.StatusCode, st.Reason)
			}
			resp, body = get(t, c, u+"/api/v1/namespaces/ns/pods/ok", nil)
			if st := statusOf(t, body); resp.StatusCode != 403 ||
				st.Message != `pods "ok" is forbidden: User "system:anonymous" cannot get resource "pods" in API group "" in the namespace "ns"` {
				t.Errorf("anonymous: got %d %q", resp.StatusCode, st.Message)
			}
			if resp, body = get(t, c, u+"/healthz", nil); resp.StatusCode != 200 || body != "ok" {
				t.Errorf("anonymous healthz: got %d %q", resp.StatusCode, body)
			}

			// Bad ?timeout= is answered before anything authenticates.
			resp, body = get(t, c, u+"/api/v1/namespaces/ns/pods/ok?timeout=x", nil)
			if st := statusOf(t, body); resp.StatusCode != 400 || st.Message != `invalid timeout specified in the request URL - time: invalid duration "x"` {
				t.Errorf("bad timeout: got %d %q", resp.StatusCode, st.Message)
			}

			// A watch is long-running: it outlives the request timeout,
			// whatever spelling of ?watch= asked for it.
			for _, v := range []string{"true", "TRUE", "yes", "on", "abc", ""} {
				resp, body = get(t, c, u+"/api/v1/pods?watch="+v, bearerGood)
				if resp.StatusCode != 200 || body != "watched" {
					t.Errorf("watch=%s: got %d %q, want 200 watched (long-running bypasses the timeout)", v, resp.StatusCode, body)
				}
			}

			// Impersonation is authorized after authentication (the
			// interim authorizer lets alice impersonate) and the request
			// is served as the impersonated user.
			resp, body = get(t, c, u+"/api/v1/namespaces/ns/pods/ok", http.Header{
				"Authorization": {"Bearer good"}, "Impersonate-User": {"bob"}, "Impersonate-Group": {"system:masters"}})
			if resp.StatusCode != 200 || body != "ok" {
				t.Errorf("impersonation: got %d %q, want 200 ok", resp.StatusCode, body)
			}
			resp, body = get(t, c, u+"/api/v1/namespaces/ns/pods/ok", http.Header{"Authorization": {"Bearer good"}, "impersonate-extra-scopes": {"x"}})
			if st := statusOf(t, body); resp.StatusCode != 400 || st.Message != `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string(nil), Extra:map[string][]string{"scopes":[]string{"x"}}} without impersonating a user name` {
				t.Errorf("impersonate-extra without a user: got %d %q", resp.StatusCode, st.Message)
			}
			resp, body = get(t, c, u+"/api/v1/namespaces/ns/pods/ok", http.Header{"Authorization": {"Bearer bad"}, "Impersonate-User": {"bob"}})
			if st := statusOf(t, body); resp.StatusCode != 401 || st.Reason != metav1.StatusReasonUnauthorized {
				t.Errorf("impersonation with a bad token: got %d %s, want 401", resp.StatusCode, st.Reason)
			}

			// Panic recovery covers the whole chain, and the server goes on.
			if resp, err := c.Do(mustGet(t, u+"/api/v1/namespaces/ns/pods/panic", bearerGood)); err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil {
					t.Errorf("panic: got a complete response, want an aborted one")
				}
			}
			if resp, _ := get(t, c, u+"/api/v1/namespaces/ns/pods/ok", bearerGood); resp.StatusCode != 200 {
				t.Errorf("after panic: got %d, want 200", resp.StatusCode)
			}

			// Max-in-flight comes before authorization: with the read-only
			// pool full, even a request that would be forbidden gets 429.
			held := make(chan int, 1)
			holdReq := mustGet(t, u+"/api/v1/namespaces/ns/pods/hold", bearerGood)
			go func() {
				resp, err := c.Do(holdReq)
				if err != nil {
					held <- 0
					return
				}
				resp.Body.Close()
				held <- resp.StatusCode
			}()
			<-api.entered
			resp, body = get(t, c, u+"/api/v1/namespaces/ns/pods/ok", nil)
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || body != TooManyRequestsMessage+"\n" {
				t.Errorf("pool full: got %d %q, want 429", resp.StatusCode, body)
			}
			close(api.holdRelease)
			if code := <-held; code == 0 {
				t.Errorf("held request failed")
			}
			// The slot frees when the held handler returns (not at its 504).
			deadline := time.Now().Add(5 * time.Second)
			for {
				resp, _ := get(t, c, u+"/api/v1/namespaces/ns/pods/ok", bearerGood)
				if resp.StatusCode == 200 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("read-only slot never freed: got %d", resp.StatusCode)
				}
				time.Sleep(5 * time.Millisecond)
			}

			// Timeout: 504 for a slow request (its handler keeps the slot
			// until the test ends).
			resp, body = get(t, c, u+"/api/v1/namespaces/ns/pods/slow", bearerGood)
			if resp.StatusCode != 504 || body != timeoutBody {
				t.Errorf("slow: got %d %q, want 504", resp.StatusCode, body)
			}

			// Audit: the panic and an authorized request were recorded.
			evs := waitForEvents(t, log, func(evs []audit.Event) bool {
				var sawPanic, sawOK, sawImpersonation bool
				for _, ev := range evs {
					sawImpersonation = sawImpersonation || (ev.Stage == audit.StageResponseComplete && ev.User.Username == "alice" &&
						ev.ImpersonatedUser != nil && ev.ImpersonatedUser.Username == "bob" &&
						strings.Join(ev.ImpersonatedUser.Groups, ",") == "system:masters,system:authenticated")
					sawPanic = sawPanic || ev.Stage == audit.StagePanic
					sawOK = sawOK || (ev.User.Username == "alice" && ev.Annotations[DecisionAnnotationKey] == "allow" &&
						ev.ResponseStatus != nil && ev.ResponseStatus.Code == 200)
				}
				return sawPanic && sawOK && sawImpersonation
			})
			for _, ev := range evs {
				if ev.Stage == audit.StageResponseComplete && ev.ResponseStatus != nil && ev.ResponseStatus.Code == 403 &&
					(ev.Annotations[DecisionAnnotationKey] != "forbid" || ev.ResponseStatus.Reason != metav1.StatusReasonForbidden) {
					t.Errorf("forbidden event: got %+v", ev)
				}
			}

			// Metrics saw the 504, the 429 and the 403.
			for _, code := range []string{"504", "429", "403", "401", "200"} {
				if !hasRequestCode(t, reg, code) {
					t.Errorf("apiserver_request_total has no code=%s series", code)
				}
			}
		})
	}
}

// The shutdown filters sit outside authentication: their answers come first.
func TestBuildChainShutdown(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			api := newChainAPI()
			retryAfter := make(chan struct{})
			wg := &SafeWaitGroup{}
			cfg := ChainConfig{
				Logger:                         discard(),
				RetryAfter:                     retryAfter,
				NonLongRunningRequestWaitGroup: wg,
				RequestTimeout:                 time.Minute,
				Authenticator:                  tokenAuthenticator{"good": alice},
				Authorizer:                     interim.Authorizer{},
			}
			srv, c := startTLS(t, BuildChain(api.handler(), cfg), proto.http2)
			u := srv.URL

			// An in-flight request holds the drain open.
			held := make(chan string, 1)
			holdReq := mustGet(t, u+"/api/v1/namespaces/ns/pods/hold", bearerGood)
			go func() {
				resp, err := c.Do(holdReq)
				if err != nil {
					held <- err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				held <- fmt.Sprintf("%d %s", resp.StatusCode, b)
			}()
			<-api.entered
			drained := wg.StartWait()

			resp, body := get(t, c, u+"/api/v1/namespaces/ns/pods/ok", bearerGood)
			if st := statusOf(t, body); resp.StatusCode != 503 || st.Message != "apiserver is shutting down" || resp.Header.Get("Retry-After") != "1" {
				t.Errorf("after wait: got %d %q, want the shutdown 503", resp.StatusCode, st.Message)
			}
			if resp, body = get(t, c, u+"/readyz", nil); resp.StatusCode != 200 || body != "ok" {
				t.Errorf("readyz after wait: got %d %q, want served", resp.StatusCode, body)
			}

			close(retryAfter)
			resp, body = get(t, c, u+"/api/v1/namespaces/ns/pods/ok", http.Header{"Authorization": {"Bearer bad"}})
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "5" || body != RetryAfterMessage+"\n" {
				t.Errorf("retry-after with a bad token: got %d %q, want the shutdown 429 (before authentication)", resp.StatusCode, body)
			}
			if resp, body = get(t, c, u+"/healthz", nil); resp.StatusCode != 200 || body != "ok" {
				t.Errorf("healthz during retry-after: got %d %q, want served", resp.StatusCode, body)
			}

			select {
			case <-drained:
				t.Fatal("drained while a request is in flight")
			default:
			}
			close(api.holdRelease)
			if got := <-held; got != "200 held" {
				t.Errorf("in-flight request: got %q, want 200 held", got)
			}
			<-drained
		})
	}
}

func mustGet(t *testing.T, url string, hdr http.Header) *http.Request {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	return req
}

// waitForEvents polls the audit log until ok (the writer runs
// asynchronously), then returns the events.
func waitForEvents(t *testing.T, l *auditLog, ok func([]audit.Event) bool) []audit.Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		evs := l.snapshot(t)
		if ok(evs) {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit events never matched: %+v", evs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hasRequestCode(t *testing.T, reg *prometheus.Registry, code string) bool {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "apiserver_request_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "code" && l.GetValue() == code {
					return true
				}
			}
		}
	}
	return false
}
