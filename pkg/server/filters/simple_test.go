package filters

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

func TestWithAuditInit(t *testing.T) {
	tests := []struct {
		name        string
		reqID       string
		presetResp  string
		wantRespHdr string // "" means: a new UUID
	}{
		{name: "client id is kept", reqID: "abc", wantRespHdr: "abc"},
		{name: "new uuid"},
		{name: "existing response header wins", reqID: "abc", presetResp: "outer", wantRespHdr: "outer"},
	}
	for _, tt := range tests {
		for _, auditing := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/auditing=%v", tt.name, auditing), func(t *testing.T) {
				var ctxID string
				var hasAuditCtx bool
				h := withAuditInit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					ctxID = request.AuditIDFrom(r.Context())
					hasAuditCtx = audit.FromContext(r.Context()) != nil
				}), auditing)
				req := httptest.NewRequest("GET", "/", nil)
				if tt.reqID != "" {
					req.Header.Set("Audit-ID", tt.reqID)
				}
				rec := httptest.NewRecorder()
				if tt.presetResp != "" {
					rec.Header().Set("Audit-Id", tt.presetResp)
				}
				h.ServeHTTP(rec, req)
				got := rec.Header().Get("Audit-Id")
				if tt.wantRespHdr == "" {
					if _, err := uuid.Parse(got); err != nil {
						t.Errorf("got response Audit-Id %q, want a UUID", got)
					}
					if ctxID != got {
						t.Errorf("got context id %q, want %q", ctxID, got)
					}
				} else if got != tt.wantRespHdr {
					t.Errorf("got response Audit-Id %q, want %q", got, tt.wantRespHdr)
				}
				if tt.reqID != "" && ctxID != tt.reqID {
					t.Errorf("got context id %q, want %q", ctxID, tt.reqID)
				}
				if hasAuditCtx != auditing {
					t.Errorf("got an audit context: %v, want %v", hasAuditCtx, auditing)
				}
			})
		}
	}
}

func TestWithMuxAndDiscoveryComplete(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	tests := []struct {
		name   string
		signal chan struct{}
		want   bool
	}{
		{"before the signal", make(chan struct{}), true},
		{"after the signal", closed, false},
		{"no signal", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got bool
			var sig <-chan struct{}
			if tt.signal != nil {
				sig = tt.signal
			}
			h := WithMuxAndDiscoveryComplete(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = request.MuxIncomplete(r.Context())
			}), sig)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			if got != tt.want {
				t.Errorf("got incomplete=%v, want %v", got, tt.want)
			}
		})
	}
}

func TestWithRequestReceivedTimestamp(t *testing.T) {
	var got time.Time
	var ok bool
	h := WithRequestReceivedTimestamp(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok = request.ReceivedTimestampFrom(r.Context())
	}))
	before := time.Now()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	after := time.Now()
	if !ok || got.Before(before) || got.After(after) {
		t.Errorf("got %v (ok=%v), want within [%v, %v]", got, ok, before, after)
	}
}

func TestWithRequestInfo(t *testing.T) {
	tests := []struct {
		name     string
		target   string
		wantCode int
		wantBody string
		wantVerb string
	}{
		{name: "resource", target: "/api/v1/namespaces/ns/pods", wantCode: 200, wantVerb: "list"},
		{name: "non-resource", target: "/healthz", wantCode: 200, wantVerb: "get"},
		{name: "unparsable", target: "/api/v1/watch", wantCode: 500,
			wantBody: `Internal Server Error: "/api/v1/watch": failed to create RequestInfo: unable to determine kind and namespace from url /api/v1/watch` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var verb string
			h := withInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				info, _ := request.RequestInfoFrom(r.Context())
				verb = info.Verb
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", tt.target, nil))
			if rec.Code != tt.wantCode {
				t.Fatalf("got %d, want %d", rec.Code, tt.wantCode)
			}
			if tt.wantBody != "" {
				if got := rec.Body.String(); got != tt.wantBody {
					t.Errorf("got body %q, want %q", got, tt.wantBody)
				}
				if got := rec.Header().Get("Content-Type"); got != "text/plain; charset=utf-8" {
					t.Errorf("got Content-Type %q, want text/plain", got)
				}
			}
			if verb != tt.wantVerb {
				t.Errorf("got verb %q, want %q", verb, tt.wantVerb)
			}
		})
	}
}

func TestWithRetryAfter(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	tests := []struct {
		name      string
		signal    chan struct{}
		path, ua  string
		wantSrved bool
	}{
		{name: "before the signal", signal: make(chan struct{}), path: "/api/v1/pods", wantSrved: true},
		{name: "after the signal", signal: closed, path: "/api/v1/pods"},
		{name: "loopback client exempt", signal: closed, path: "/api/v1/pods", ua: "kube-apiserver/v1.34.0 (linux/amd64)", wantSrved: true},
		{name: "readyz exempt", signal: closed, path: "/readyz", wantSrved: true},
		{name: "livez sub-path exempt", signal: closed, path: "/livez/ping", wantSrved: true},
		{name: "healthz exempt", signal: closed, path: "/healthz", wantSrved: true},
		{name: "metrics exempt (prefix)", signal: closed, path: "/metricsfoo", wantSrved: true},
		{name: "version not exempt", signal: closed, path: "/version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			served := false
			h := WithRetryAfter(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served = true }), tt.signal)
			req := httptest.NewRequest("GET", tt.path, nil)
			req.Header.Set("User-Agent", tt.ua)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if served != tt.wantSrved {
				t.Fatalf("got served=%v, want %v", served, tt.wantSrved)
			}
			if served {
				return
			}
			want := map[string]string{
				"Retry-After": "5", "Connection": "close",
				"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff",
			}
			for k, v := range want {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("got %s %q, want %q", k, got, v)
				}
			}
			if rec.Code != 429 {
				t.Errorf("got %d, want 429", rec.Code)
			}
			if got, want := rec.Body.String(), "The apiserver is shutting down, please try again later.\n"; got != want {
				t.Errorf("got body %q, want %q", got, want)
			}
		})
	}
}

func TestHeaderFilters(t *testing.T) {
	tests := []struct {
		name   string
		filter func(http.Handler) http.Handler
		preset map[string]string
		key    string
		want   string
	}{
		{"cache-control set", WithCacheControl, nil, "Cache-Control", "no-cache, private"},
		{"cache-control kept", WithCacheControl, map[string]string{"Cache-Control": "public"}, "Cache-Control", "public"},
		{"hsts set", func(h http.Handler) http.Handler {
			return WithHSTS(h, []string{"max-age=31536000", "includeSubDomains", "preload"})
		},
			nil, "Strict-Transport-Security", "max-age=31536000; includeSubDomains; preload"},
		{"hsts kept", func(h http.Handler) http.Handler { return WithHSTS(h, []string{"max-age=1"}) },
			map[string]string{"Strict-Transport-Security": "max-age=2"}, "Strict-Transport-Security", "max-age=2"},
		{"hsts off", func(h http.Handler) http.Handler { return WithHSTS(h, nil) }, nil, "Strict-Transport-Security", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			for k, v := range tt.preset {
				rec.Header().Set(k, v)
			}
			tt.filter(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			if got := rec.Header().Get(tt.key); got != tt.want {
				t.Errorf("got %s %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}

func TestValidateHSTSDirectives(t *testing.T) {
	tests := []struct {
		in      []string
		wantErr bool
	}{
		{[]string{"max-age=31536000", "includeSubDomains", "preload"}, false},
		{[]string{"max-age=abc"}, true},
		{[]string{"max-age"}, true},
		{[]string{"foo"}, true},
		{[]string{" "}, true},
	}
	for _, tt := range tests {
		if err := ValidateHSTSDirectives(tt.in); (err != nil) != tt.wantErr {
			t.Errorf("ValidateHSTSDirectives(%q) = %v, want error %v", tt.in, err, tt.wantErr)
		}
	}
}

func TestWithCORS(t *testing.T) {
	allowed, err := CompileCORSOrigins([]string{`^https://example\.com$`, `//localhost(:|$)`})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, origin string
		wantCode             int
		wantSrved            bool
		wantAllow            string
	}{
		{"matching origin", "GET", "https://example.com", 200, true, "https://example.com"},
		{"matching preflight", "OPTIONS", "http://localhost:8080", 204, false, "http://localhost:8080"},
		{"non-matching origin", "GET", "https://example.com.evil.io", 200, true, ""},
		{"non-matching preflight", "OPTIONS", "https://evil.io", 200, true, ""},
		{"no origin", "GET", "", 200, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			served := false
			h := WithCORS(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }), allowed)
			req := httptest.NewRequest(tt.method, "/api", nil)
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode || served != tt.wantSrved {
				t.Errorf("got code %d served %v, want %d %v", rec.Code, served, tt.wantCode, tt.wantSrved)
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != tt.wantAllow {
				t.Errorf("got Allow-Origin %q, want %q", got, tt.wantAllow)
			}
			if tt.wantAllow != "" {
				if got := rec.Header().Get("Access-Control-Allow-Methods"); got != "POST, GET, OPTIONS, PUT, DELETE, PATCH" {
					t.Errorf("got Allow-Methods %q", got)
				}
				if got := rec.Header().Get("Access-Control-Allow-Credentials"); got != "true" {
					t.Errorf("got Allow-Credentials %q, want true", got)
				}
			}
		})
	}
	for _, bad := range []string{"example.com", "^example.com", "example.com$", "^(x$"} {
		if _, err := CompileCORSOrigins([]string{bad}); err == nil {
			t.Errorf("CompileCORSOrigins(%q): got nil error, want one", bad)
		}
	}
}
