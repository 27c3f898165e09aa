package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// tokenCacheFamilies are the HELP and TYPE lines and the histogram's
// buckets of the token cache's families, as kube-apiserver v1.37.2's
// /metrics has them (read from the reference binary, session 21).
const tokenCacheFamilies = `# HELP authentication_token_cache_active_fetch_count [ALPHA] 
# TYPE authentication_token_cache_active_fetch_count gauge
# HELP authentication_token_cache_fetch_total [ALPHA] 
# TYPE authentication_token_cache_fetch_total counter
# HELP authentication_token_cache_request_duration_seconds [ALPHA] 
# TYPE authentication_token_cache_request_duration_seconds histogram
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="0.005"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="0.01"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="0.025"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="0.05"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="0.1"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="0.25"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="0.5"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="1"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="2.5"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="5"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="10"}
authentication_token_cache_request_duration_seconds_bucket{status="miss",le="+Inf"}
# HELP authentication_token_cache_request_total [ALPHA] 
# TYPE authentication_token_cache_request_total counter`

// TestTokenCacheMetrics: the bearer-token cache serves kube-apiserver's
// four authentication_token_cache_* families with the reference's help,
// type and buckets, and counts as the reference did for the same
// sequence (a static token used four times within 10 s: one miss, three
// hits, one fetch; an unknown token twice: two misses, two fetches "ok",
// as no authenticator has an opinion and no failure is cached; the
// static token again after 10 s: a miss and a fetch). The admin client
// authenticates with a client certificate and the server's own loopback
// token is outside the cache, so nothing else feeds these series.
func TestTokenCacheMetrics(t *testing.T) {
	srv, clock := authnServerWithClock(t)
	scrape := func() string {
		t.Helper()
		body, err := mustClientset(t, srv.Config).CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
		if err != nil {
			t.Fatalf("GET /metrics: %v", err)
		}
		return string(body)
	}
	if m := scrape(); strings.Contains(m, "authentication_token_cache_request_total{") {
		t.Errorf("token cache series before any token was used:\n%s", grepLines(m, "authentication_token_cache_"))
	}
	get := func(token string, want int) {
		t.Helper()
		if code, body := getWithToken(t, srv, token, "/api/v1/namespaces"); code != want {
			t.Fatalf("token %q: got %d %s, want %d", token, code, body, want)
		}
	}
	for range 4 {
		get("static-token", http.StatusOK)
	}
	for range 2 {
		get("no-such-token", http.StatusUnauthorized)
	}
	expireTokens(clock)
	get("static-token", http.StatusOK)

	m := scrape()
	var headers []string
	for _, l := range strings.Split(m, "\n") {
		if strings.HasPrefix(l, "# HELP authentication_token_cache_") || strings.HasPrefix(l, "# TYPE authentication_token_cache_") ||
			strings.HasPrefix(l, `authentication_token_cache_request_duration_seconds_bucket{status="miss"`) {
			if i := strings.LastIndexByte(l, ' '); !strings.HasPrefix(l, "#") && i > 0 {
				l = l[:i]
			}
			headers = append(headers, l)
		}
	}
	if got := strings.Join(headers, "\n"); got != tokenCacheFamilies {
		t.Errorf("token cache families:\n%s\nwant the reference's:\n%s", got, tokenCacheFamilies)
	}
	want := []string{
		`authentication_token_cache_active_fetch_count{status="blocked"} 0`,
		`authentication_token_cache_active_fetch_count{status="in_flight"} 0`,
		`authentication_token_cache_fetch_total{status="ok"} 4`,
		`authentication_token_cache_request_duration_seconds_count{status="hit"} 3`,
		`authentication_token_cache_request_duration_seconds_count{status="miss"} 4`,
		`authentication_token_cache_request_total{status="hit"} 3`,
		`authentication_token_cache_request_total{status="miss"} 4`,
	}
	var got []string
	for _, l := range strings.Split(m, "\n") {
		if strings.HasPrefix(l, "authentication_token_cache_") && !strings.Contains(l, "_bucket{") && !strings.Contains(l, "_sum{") {
			got = append(got, l)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("token cache series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
