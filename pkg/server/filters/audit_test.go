package filters

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// auditLog is a real log backend writing to memory; events() shuts it down
// and decodes what it wrote.
type auditLog struct {
	buf syncBuffer
	*audit.LogBackend
}

func newAuditLog(t *testing.T) *auditLog {
	l := &auditLog{}
	l.LogBackend = audit.NewLogBackend(&l.buf, nil, discard())
	if err := l.Run(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Shutdown)
	return l
}

func (l *auditLog) events(t *testing.T) []audit.Event {
	t.Helper()
	l.Shutdown()
	return l.snapshot(t)
}

// snapshot decodes what was written so far.
func (l *auditLog) snapshot(t *testing.T) []audit.Event {
	t.Helper()
	var out []audit.Event
	sc := bufio.NewScanner(strings.NewReader(l.buf.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

func TestWithAudit(t *testing.T) {
	type want struct {
		stage audit.Stage
		code  int32
	}
	tests := []struct {
		name    string
		policy  audit.Policy
		target  string
		handler http.HandlerFunc
		panics  bool
		want    []want
	}{
		{name: "one ResponseComplete", policy: audit.MetadataPolicy(), target: "/api/v1/namespaces/ns/pods/p",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) },
			want:    []want{{audit.StageResponseComplete, 404}}},
		{name: "RequestReceived when not omitted", policy: audit.Policy{Level: audit.LevelMetadata}, target: "/healthz",
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) },
			want:    []want{{audit.StageRequestReceived, 0}, {audit.StageResponseComplete, 200}}},
		{name: "watch gets ResponseStarted", policy: audit.MetadataPolicy(), target: "/api/v1/pods?watch=true",
			handler: func(w http.ResponseWriter, r *http.Request) { w.(http.Flusher).Flush(); _, _ = w.Write([]byte("{}")) },
			want:    []want{{audit.StageResponseStarted, 200}, {audit.StageResponseComplete, 200}}},
		{name: "silent watch still gets ResponseStarted", policy: audit.MetadataPolicy(), target: "/api/v1/pods?watch=true",
			handler: func(w http.ResponseWriter, r *http.Request) {},
			want:    []want{{audit.StageResponseStarted, 200}, {audit.StageResponseComplete, 200}}},
		{name: "panic", policy: audit.MetadataPolicy(), target: "/api/v1/pods", panics: true,
			handler: func(w http.ResponseWriter, r *http.Request) { panic("boom") },
			want:    []want{{audit.StagePanic, 500}}},
		{name: "level None", policy: audit.Policy{Level: audit.LevelNone}, target: "/api/v1/pods",
			handler: func(w http.ResponseWriter, r *http.Request) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := newAuditLog(t)
			inner := WithAudit(tt.handler, log, tt.policy, DefaultLongRunning, nil)
			h := WithAuditInit(withInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r = r.WithContext(request.WithUser(r.Context(), alice))
				addTestAnnotation(r)
				inner.ServeHTTP(w, r)
			})))
			req := httptest.NewRequest("GET", tt.target, nil)
			req.Header.Set("Audit-ID", "the-id")
			req.Header.Set("User-Agent", "test-agent")
			req.RemoteAddr = "192.0.2.7:1234"
			func() {
				defer func() {
					if p := recover(); (p != nil) != tt.panics {
						t.Errorf("got panic %v, want panic=%v", p, tt.panics)
					}
				}()
				h.ServeHTTP(httptest.NewRecorder(), req)
			}()
			evs := log.events(t)
			if len(evs) != len(tt.want) {
				t.Fatalf("got %d events %+v, want %d", len(evs), evs, len(tt.want))
			}
			for i, ev := range evs {
				var code int32
				if ev.ResponseStatus != nil {
					code = ev.ResponseStatus.Code
				}
				if ev.Stage != tt.want[i].stage || code != tt.want[i].code {
					t.Errorf("event %d: got %s/%d, want %s/%d", i, ev.Stage, code, tt.want[i].stage, tt.want[i].code)
				}
				if ev.AuditID != "the-id" || ev.User.Username != "alice" || ev.UserAgent != "test-agent" ||
					len(ev.SourceIPs) != 1 || ev.SourceIPs[0] != "192.0.2.7" || ev.Level != audit.LevelMetadata ||
					ev.Kind != "Event" || ev.APIVersion != "audit.k8s.io/v1" || ev.RequestURI != tt.target {
					t.Errorf("event %d: got %+v", i, ev)
				}
				if ev.Annotations["test"] != "yes" {
					t.Errorf("event %d: got annotations %v, want test=yes", i, ev.Annotations)
				}
			}
			if len(evs) > 0 && tt.target == "/api/v1/namespaces/ns/pods/p" {
				ref := evs[0].ObjectRef
				if ref == nil || ref.Resource != "pods" || ref.Namespace != "ns" || ref.Name != "p" || ref.APIVersion != "v1" || evs[0].Verb != "get" {
					t.Errorf("got objectRef %+v verb %q, want pods ns/p v1 get", ref, evs[0].Verb)
				}
			}
		})
	}
}

// addTestAnnotation adds an annotation before the audit filter runs, as
// authentication might.
func addTestAnnotation(r *http.Request) { audit.AddAnnotation(r.Context(), "test", "yes") }

func TestWithFailedAuthenticationAudit(t *testing.T) {
	log := newAuditLog(t)
	h := WithAuditInit(withInfo(WithAuthentication(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		tokenAuthenticator{}, WithFailedAuthenticationAudit(Unauthorized(), log, audit.MetadataPolicy(), nil), discard(), nil)))
	req := httptest.NewRequest("GET", "/api/v1/pods", nil)
	req.Header.Set("Authorization", "Bearer nope")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Fatalf("got %d, want 401", rec.Code)
	}
	evs := log.events(t)
	if len(evs) != 1 || evs[0].Stage != audit.StageResponseStarted || evs[0].ResponseStatus.Code != 401 || evs[0].User.Username != "" {
		t.Errorf("got %+v, want one ResponseStarted 401 event without user", evs)
	}
}

func TestSourceIPs(t *testing.T) {
	tests := []struct {
		name, xff, real, remote string
		want                    []string
	}{
		{name: "remote only", remote: "10.0.0.1:5", want: []string{"10.0.0.1"}},
		{name: "forwarded chain", xff: "1.1.1.1, bogus, 2.2.2.2", remote: "10.0.0.1:5", want: []string{"1.1.1.1", "2.2.2.2", "10.0.0.1"}},
		{name: "real ip not repeated", xff: "1.1.1.1", real: "1.1.1.1", remote: "[::1]:5", want: []string{"1.1.1.1", "::1"}},
		{name: "remote equal to last", xff: "1.1.1.1", remote: "1.1.1.1:9", want: []string{"1.1.1.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
			if tt.real != "" {
				r.Header.Set("X-Real-Ip", tt.real)
			}
			got := sourceIPs(r)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// flushErrorWriter is a ResponseWriter whose flushes fail, as a closed
// connection's do.
type flushErrorWriter struct {
	*httptest.ResponseRecorder
	err error
}

func (w flushErrorWriter) FlushError() error { return w.err }

// TestAuditWriterPassesFlushErrors: a handler flushing through the audit
// writer (a watch) learns that the wrapped writer's flush failed, through
// http.ResponseController as through net/http's own writers.
func TestAuditWriterPassesFlushErrors(t *testing.T) {
	broken := errors.New("connection gone")
	var got error
	inner := WithAudit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = http.NewResponseController(w).Flush()
	}), newAuditLog(t), audit.MetadataPolicy(), DefaultLongRunning, nil)
	h := WithAuditInit(withInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), alice)))
	})))
	h.ServeHTTP(flushErrorWriter{httptest.NewRecorder(), broken}, httptest.NewRequest("GET", "/api/v1/pods?watch=true", nil))
	if !errors.Is(got, broken) {
		t.Fatalf("Flush through the audit writer returned %v, want %v", got, broken)
	}
}
