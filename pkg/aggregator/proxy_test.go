package aggregator

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const group, version = "wardle.example.com", "v1alpha1"

// seenRequest is what the backend reports about a request it got.
type seenRequest struct {
	Method, Path, RawQuery, Body, Host string
	ProtoMajor                         int
	ClientCN                           string
	Header                             http.Header
}

// wardle is a backend handler: discovery at /apis/<g>/<v>, a streaming
// watch, an upgrade that echoes, a redirect, and an echo of everything
// else.
type wardle struct {
	release chan struct{} // the watch's second event waits for it
	once    sync.Once
}

func newWardle() *wardle { return &wardle{release: make(chan struct{})} }

func (b *wardle) releaseWatch() { b.once.Do(func() { close(b.release) }) }

func (b *wardle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	base := "/apis/" + group + "/" + version
	switch {
	case r.URL.Path == base:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"wardle.example.com/v1alpha1","resources":[]}`)
	case r.URL.Path == base+"/flunders" && r.URL.Query().Get("watch") == "true":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"ADDED","object":{"name":"one"}}`+"\n")
		http.NewResponseController(w).Flush()
		select {
		case <-b.release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"type":"ADDED","object":{"name":"two"}}`+"\n")
	case r.URL.Path == base+"/upgrade":
		if r.Header.Get("Upgrade") != "test-echo" {
			http.Error(w, "upgrade required", http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test-echo\r\n\r\n")
		_ = rw.Flush()
		line, err := rw.ReadString('\n')
		if err != nil {
			return
		}
		_, _ = rw.WriteString("echo: " + line)
		_ = rw.Flush()
	case r.URL.Path == base+"/redirect":
		http.Redirect(w, r, "https://elsewhere.example.com/", http.StatusFound)
	default:
		body, _ := io.ReadAll(r.Body)
		seen := seenRequest{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Body: string(body), Host: r.Host, ProtoMajor: r.ProtoMajor, Header: r.Header}
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			seen.ClientCN = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(seen)
	}
}

// setupWardle starts a backend, registers it and waits for it to be
// Available.
func setupWardle(t *testing.T) (*testServer, *pki, *wardle, *backend) {
	t.Helper()
	p := newPKI(t)
	ts := startServer(t, options{pki: p})
	w := newWardle()
	t.Cleanup(w.releaseWatch)
	b := startBackend(t, p, "wardle", "api", w, "")
	ts.svcs.setService("wardle", "api")
	ts.svcs.setEndpoint("wardle", "api", b.addr)
	c := ts.client(t)
	if _, err := c.ApiregistrationV1().APIServices().Create(context.Background(), remoteAPIService(group, version, "wardle", "api", p.servingCA.pem), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, c, version+"."+group, 10*time.Second, reason("Passed"))
	// The proxy route learns of the Available condition from the same
	// watch, possibly a moment after the client saw it.
	client := ts.httpClient(false)
	eventually(t, 10*time.Second, func() error {
		resp, err := client.Get(ts.srv.URL + "/apis/" + group + "/" + version)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			return errorf("proxy route not ready: got 503")
		}
		return nil
	})
	return ts, p, w, b
}

func TestProxy(t *testing.T) {
	ts, _, w, _ := setupWardle(t)
	base := ts.srv.URL + "/apis/" + group + "/" + version

	for _, h2 := range []bool{false, true} {
		name := "http1"
		if h2 {
			name = "http2"
		}
		t.Run(name, func(t *testing.T) {
			client := ts.httpClient(h2)
			// GET: path and raw query unchanged; identity from the
			// context only; the front-proxy certificate presented.
			req, _ := http.NewRequest("GET", base+"/namespaces/ns1/flunders?labelSelector=a%3Db&limit=5&x=%2F", nil)
			req.Header.Set("X-Remote-User", "mallory")
			req.Header.Set("X-Remote-Group", "system:masters")
			req.Header.Set("X-Remote-Extra-Evil", "yes")
			req.Header.Set("Impersonate-User", "root")
			req.Header.Set("Authorization", "Bearer secret")
			seen := doJSON(t, client, req)
			if seen.Path != "/apis/wardle.example.com/v1alpha1/namespaces/ns1/flunders" || seen.RawQuery != "labelSelector=a%3Db&limit=5&x=%2F" {
				t.Errorf("got path %q query %q", seen.Path, seen.RawQuery)
			}
			if got := seen.Header.Values("X-Remote-User"); len(got) != 1 || got[0] != "alice" {
				t.Errorf("got X-Remote-User %v, want [alice]", got)
			}
			if got := strings.Join(seen.Header.Values("X-Remote-Group"), ","); got != "devs,system:authenticated" {
				t.Errorf("got X-Remote-Group %s, want devs,system:authenticated", got)
			}
			if got := seen.Header.Get("X-Remote-Uid"); got != "uid-1" {
				t.Errorf("got X-Remote-Uid %q, want uid-1", got)
			}
			if got := strings.Join(seen.Header.Values("X-Remote-Extra-Scopes"), ","); got != "a,b" {
				t.Errorf("got X-Remote-Extra-Scopes %q, want a,b", got)
			}
			for _, h := range []string{"X-Remote-Extra-Evil", "Impersonate-User", "Authorization"} {
				if v := seen.Header.Get(h); v != "" {
					t.Errorf("got %s: %q forwarded, want none", h, v)
				}
			}
			if seen.ClientCN != "front-proxy-client" {
				t.Errorf("got client certificate CN %q, want front-proxy-client", seen.ClientCN)
			}
			if seen.Host != "api.wardle.svc" && !strings.HasPrefix(seen.Host, "127.0.0.1:") {
				t.Errorf("got Host %q, want the backend's", seen.Host)
			}

			// POST: the body passes.
			req, _ = http.NewRequest("POST", base+"/namespaces/ns1/flunders", strings.NewReader(`{"kind":"Flunder"}`))
			req.Header.Set("Content-Type", "application/json")
			seen = doJSON(t, client, req)
			if seen.Method != "POST" || seen.Body != `{"kind":"Flunder"}` {
				t.Errorf("got %s %q, want POST with the body", seen.Method, seen.Body)
			}

			// Redirects are not forwarded.
			resp, err := client.Get(base + "/redirect")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusBadGateway || string(body) != "the backend attempted to redirect this request, which is not permitted" {
				t.Errorf("redirect: got %d %q, want 502", resp.StatusCode, body)
			}
		})
	}

	// The backend is reached over HTTP/2.
	seen := doJSON(t, ts.httpClient(false), mustRequest(t, "GET", base+"/anything"))
	if seen.ProtoMajor != 2 {
		t.Errorf("got backend protocol HTTP/%d, want HTTP/2", seen.ProtoMajor)
	}

	// A watch streams: the first event arrives while the backend still
	// holds the response open.
	t.Run("watch", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/flunders?watch=true", nil)
		resp, err := ts.httpClient(true).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, `"one"`) {
			t.Fatalf("first event: got %q %v", line, err)
		}
		w.releaseWatch()
		line, err = r.ReadString('\n')
		if err != nil || !strings.Contains(line, `"two"`) {
			t.Fatalf("second event: got %q %v", line, err)
		}
	})

	// An upgrade passes through (HTTP/1.1 on both sides).
	t.Run("upgrade", func(t *testing.T) {
		conn, err := tls.Dial("tcp", ts.srv.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(conn, "GET /apis/"+group+"/"+version+"/upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test-echo\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Upgrade") != "test-echo" {
			t.Fatalf("got %d Upgrade=%q, want 101 test-echo", resp.StatusCode, resp.Header.Get("Upgrade"))
		}
		_, _ = io.WriteString(conn, "hello\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "echo: hello\n" {
			t.Errorf("got %q %v, want echo: hello", line, err)
		}
	})
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func doJSON(t *testing.T, c *http.Client, req *http.Request) seenRequest {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var seen seenRequest
	if resp.StatusCode != 200 || json.Unmarshal(body, &seen) != nil {
		t.Fatalf("%s %s: got %d %s", req.Method, req.URL, resp.StatusCode, body)
	}
	return seen
}

// get503 checks that GET url answers 503 with body want (a prefix) as
// text/plain.
func get503(t *testing.T, c *http.Client, url, want string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(string(body), want) ||
		resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("GET %s: got %d %q (%s), want 503 %q", url, resp.StatusCode, body, resp.Header.Get("Content-Type"), want)
	}
}

func TestProxyUnavailable(t *testing.T) {
	ts, _, _, b := setupWardle(t)
	client := ts.httpClient(false)
	url := ts.srv.URL + "/apis/" + group + "/" + version + "/flunders"

	// No endpoints: the route answers 503 at once.
	ts.svcs.setEndpoint("wardle", "api", "")
	get503(t, client, url, "service unavailable\n")
	// No service.
	ts.svcs.deleteService("wardle", "api")
	get503(t, client, url, "service unavailable\n")
	ts.svcs.setService("wardle", "api")
	ts.svcs.setEndpoint("wardle", "api", b.addr)
	waitCondition(t, ts.client(t), version+"."+group, 10*time.Second, reason("Passed"))

	// Nothing listening: 503 with the dial error (or, once the probe
	// noticed, the APIService is unavailable: 503 too).
	b.srv.Close()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("nothing listening: got %d, want 503", resp.StatusCode)
	}
	waitCondition(t, ts.client(t), version+"."+group, 10*time.Second, reason("FailedDiscoveryCheck"))
	get503(t, client, url, "service unavailable\n")

	// Deleting the APIService removes the route: the request falls
	// through to the end of the chain.
	if err := ts.client(t).ApiregistrationV1().APIServices().Delete(context.Background(), version+"."+group, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			return errorf("got %d, want 404", resp.StatusCode)
		}
		return nil
	})
}

func TestProxyNoUser(t *testing.T) {
	ts, _, _, _ := setupWardle(t)
	ts.agg.routesMu.Lock()
	route := ts.agg.routes[version+"."+group]
	ts.agg.routesMu.Unlock()
	if route == nil {
		t.Fatal("no route")
	}
	// The route learns that the APIService is Available from the same
	// watch the test's client saw it through, possibly a moment later.
	eventually(t, 10*time.Second, func() error {
		rec := httptest.NewRecorder()
		route.handler.ServeHTTP(rec, mustRequest(t, "GET", "https://x/apis/"+group+"/"+version))
		if rec.Code != http.StatusInternalServerError || rec.Body.String() != "missing user\n" {
			return errorf("got %d %q, want 500 missing user", rec.Code, rec.Body.String())
		}
		return nil
	})
}
