package filters

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWithPanicRecoveryRecorder(t *testing.T) {
	tests := []struct {
		name      string
		value     any
		wantCode  int
		wantBody  string
		wantLog   bool
		wantPanic any
	}{
		{"panic", "boom", 500, PanicMessage + "\n", true, "boom"},
		{"abort handler", http.ErrAbortHandler, 200, "", false, http.ErrAbortHandler},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			h := WithPanicRecovery(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(tt.value) }),
				slog.New(slog.NewTextHandler(&logs, nil)))
			rec := httptest.NewRecorder()
			func() {
				defer func() {
					if p := recover(); p != tt.wantPanic {
						t.Errorf("got re-panic %v, want %v", p, tt.wantPanic)
					}
				}()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
			}()
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tt.wantCode, tt.wantBody)
			}
			gotLog := strings.Contains(logs.String(), "apiserver panic'd")
			if gotLog != tt.wantLog {
				t.Errorf("got panic log %v, want %v: %s", gotLog, tt.wantLog, logs.String())
			}
			if tt.wantLog && !strings.Contains(logs.String(), "goroutine ") {
				t.Errorf("got log without a stack: %s", logs.String())
			}
		})
	}
}

// A panic aborts that response only; the server goes on serving, on the same
// kind of connection, over both protocols.
func TestWithPanicRecoveryKeepsServing(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			var logs syncBuffer
			mux := http.NewServeMux()
			mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
			mux.HandleFunc("/abort", func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte("partial"))
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			})
			mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
			srv, c := startTLS(t, WithPanicRecovery(mux, slog.New(slog.NewTextHandler(&logs, nil))), proto.http2)

			for _, path := range []string{"/panic", "/abort"} {
				resp, err := c.Get(srv.URL + path)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if err == nil {
					t.Errorf("GET %s: got a complete response, want an aborted one", path)
				}
			}
			for i := 0; i < 3; i++ {
				resp, body := get(t, c, srv.URL+"/ok", nil)
				if resp.StatusCode != 200 || body != "ok" {
					t.Errorf("after panic: got %d %q, want 200 ok", resp.StatusCode, body)
				}
			}
			if n := strings.Count(logs.String(), "apiserver panic'd"); n != 1 {
				t.Errorf("got %d panic logs, want 1 (the abort is silent)", n)
			}
		})
	}
}
