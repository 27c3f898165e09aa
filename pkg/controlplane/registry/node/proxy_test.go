package node

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// fakeKubelet answers every request with the method, path and query it
// received, recording them.
type fakeKubelet struct {
	mu   sync.Mutex
	reqs []string
}

func (k *fakeKubelet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.reqs = append(k.reqs, r.Method+" "+r.URL.RequestURI())
	k.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, "kubelet: "+r.Method+" "+r.URL.RequestURI())
}

func (k *fakeKubelet) requests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.reqs...)
}

func portOf(t *testing.T, srv *httptest.Server) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return int32(p)
}

// serveProxy is an API server in miniature for nodes/{name}/proxy/{path}:
// the request is resolved by r and answered, errors as Status.
func serveProxy(t *testing.T, r *ProxyREST) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// /{name}/proxy/{path...}
		parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")
		ctx := request.WithRequestInfo(req.Context(), &request.RequestInfo{
			IsResourceRequest: true, APIPrefix: "api", APIVersion: "v1",
			Resource: "nodes", Name: parts[0], Subresource: "proxy", Parts: append([]string{"nodes"}, parts...),
		})
		req = req.WithContext(ctx)
		fail := func(w http.ResponseWriter, _ *http.Request, err error) { responsewriters.WriteError(w, err) }
		h, err := r.Connect(ctx, parts[0], req, fail)
		if err != nil {
			fail(w, req, err)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func statusOf(t *testing.T, body string) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("not a Status: %q", body)
	}
	return s
}

func TestNodeProxy(t *testing.T) {
	kubeletSrv := &fakeKubelet{}
	tlsSrv := httptest.NewTLSServer(kubeletSrv)
	defer tlsSrv.Close()
	plainSrv := httptest.NewServer(kubeletSrv)
	defer plainSrv.Close()

	store, _, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("", "v1", "nodes", "")
	for _, n := range []*corev1.Node{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "worker-1"},
			Status: corev1.NodeStatus{
				// The preferred type wins over an earlier one.
				Addresses:       []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.9"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
				DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: portOf(t, tlsSrv)}},
			},
		},
		{ObjectMeta: metav1.ObjectMeta{Name: "no-address"}},
	} {
		if _, err := store.Create(ctx, n, nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// As upstream, loopback is never proxied to.
	proxy := NewProxyREST(store)
	api := serveProxy(t, proxy)
	code, body := get(t, api.URL+"/worker-1/proxy/healthz")
	if s := statusOf(t, body); code != http.StatusBadRequest || s.Reason != metav1.StatusReasonBadRequest || s.Message != "address not allowed" {
		t.Errorf("loopback kubelet: got %d %q, want 400 address not allowed", code, body)
	}

	// Tests reach the fake kubelet on loopback.
	var checked []string
	proxy.proxyable = func(_ context.Context, host string) error {
		checked = append(checked, host)
		return nil
	}
	// The kubelet's port, https: path, trailing slash and query kept.
	code, body = get(t, api.URL+"/worker-1/proxy/stats/summary/?only_cpu_and_memory=true")
	if want := "kubelet: GET /stats/summary/?only_cpu_and_memory=true"; code != http.StatusOK || body != want {
		t.Errorf("got %d %q, want 200 %q", code, body, want)
	}
	if len(checked) != 1 || checked[0] != "127.0.0.1" {
		t.Errorf("checked hosts %v, want the InternalIP [127.0.0.1]", checked)
	}
	// No path: the kubelet's root.
	if code, body = get(t, api.URL+"/worker-1/proxy"); code != http.StatusOK || body != "kubelet: GET /" {
		t.Errorf("no path: got %d %q, want the kubelet's /", code, body)
	}
	// Another port: http by default, https when named.
	plainPort := strconv.Itoa(int(portOf(t, plainSrv)))
	if code, body = get(t, api.URL+"/worker-1:"+plainPort+"/proxy/metrics"); code != http.StatusOK || body != "kubelet: GET /metrics" {
		t.Errorf("other port: got %d %q, want it reached over http", code, body)
	}
	if code, body = get(t, api.URL+"/https:worker-1:"+plainPort+"/proxy/metrics"); code != http.StatusBadGateway && code != http.StatusServiceUnavailable && code != http.StatusInternalServerError {
		t.Errorf("https to a plain port: got %d %q, want the proxy's failure", code, body)
	}
	tlsPort := strconv.Itoa(int(portOf(t, tlsSrv)))
	if code, body = get(t, api.URL+"/https:worker-1:"+tlsPort+"/proxy/pods"); code != http.StatusOK || body != "kubelet: GET /pods" {
		t.Errorf("https:name:port: got %d %q, want the kubelet reached", code, body)
	}
	if got := kubeletSrv.requests(); len(got) != 4 {
		t.Errorf("kubelet requests %v, want 4", got)
	}

	for _, tc := range []struct {
		path   string
		code   int
		reason metav1.StatusReason
		msg    string
	}{
		{"/missing/proxy/healthz", http.StatusNotFound, metav1.StatusReasonNotFound, `nodes "missing" not found`},
		{"/ftp:worker-1:80/proxy/", http.StatusBadRequest, metav1.StatusReasonBadRequest, `invalid node request "ftp:worker-1:80"`},
		{"/a:b:c:d/proxy/", http.StatusBadRequest, metav1.StatusReasonBadRequest, `invalid node request "a:b:c:d"`},
		// kube-apiserver v1.37.2 (probed 2026-11-28): a plain 500, no reason.
		{"/no-address/proxy/", http.StatusInternalServerError, metav1.StatusReasonUnknown, "no preferred addresses found; known addresses: []"},
	} {
		code, body := get(t, api.URL+tc.path)
		s := statusOf(t, body)
		if code != tc.code || s.Reason != tc.reason || !strings.Contains(s.Message, tc.msg) {
			t.Errorf("%s: got %d %s %q, want %d %s containing %q", tc.path, code, s.Reason, s.Message, tc.code, tc.reason, tc.msg)
		}
	}
}

func TestProxyableHost(t *testing.T) {
	ctx := context.Background()
	for host, ok := range map[string]bool{
		"203.0.113.9": true,
		"10.0.0.7":    true,
		"2001:db8::1": true,
		"127.0.0.1":   false,
		"::1":         false,
		"169.254.1.1": false,
		"fe80::1":     false,
		"0.0.0.0":     false,
	} {
		if err := proxyableHost(ctx, host); (err == nil) != ok {
			t.Errorf("%s: got error %v, want allowed %t", host, err, ok)
		}
	}
}
