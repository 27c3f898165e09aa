package filters

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// FuzzRequestDeadline: any ?timeout= either answers 400 or sets a deadline
// no later than received + T.
func FuzzRequestDeadline(f *testing.F) {
	for _, s := range []string{"1s", "0", "-5m", "abc", "1h2m3.5s", "9999999999999h", "1e3s", "", "5µs"} {
		f.Add(s)
	}
	const T = time.Minute
	f.Fuzz(func(t *testing.T, v string) {
		received := time.Now()
		var deadline time.Time
		var has, served bool
		h := withInfo(WithRequestDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served = true
			deadline, has = r.Context().Deadline()
		}), T, DefaultLongRunning, discard()))
		req := httptest.NewRequest("GET", "/api/v1/pods?timeout="+url.QueryEscape(v), nil)
		req = req.WithContext(request.WithReceivedTimestamp(req.Context(), received))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if !served {
			if rec.Code != 400 {
				t.Fatalf("timeout=%q: got %d, want 400 or served", v, rec.Code)
			}
			return
		}
		if !has || deadline.After(received.Add(T)) || !deadline.After(received) {
			t.Fatalf("timeout=%q: got deadline %v (has=%v), want in (received, received+T]", v, deadline, has)
		}
	})
}

// FuzzRequestHeaders: source IPs and user agents from client input never
// panic and stay well-formed (warnings: pkg/endpoints/warning).
func FuzzRequestHeaders(f *testing.F) {
	f.Add("1.1.1.1, 2.2.2.2", "3.3.3.3", "10.0.0.1:5", "kubectl")
	f.Add("", "", "[::1]:80", "")
	f.Add(",,,", "::ffff:1.2.3.4", "garbage", "\xff")
	f.Fuzz(func(t *testing.T, xff, real, remote, ua string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Forwarded-For", xff)
		r.Header.Set("X-Real-Ip", real)
		r.Header.Set("User-Agent", ua)
		r.RemoteAddr = remote
		for _, ip := range sourceIPs(r) {
			if ip == "" {
				t.Fatalf("empty source IP from %q %q %q", xff, real, remote)
			}
		}
		if got := truncateUserAgent(ua); len(got) > maxUserAgentLength+len(userAgentTruncateSuffix) {
			t.Fatalf("user agent of %d bytes not truncated", len(got))
		}
	})
}
