package pod

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// nodeStrategy stores nodes as they come (the nodes resource is another
// package's; these tests only need nodes to read).
type nodeStrategy struct{}

func (nodeStrategy) NamespaceScoped() bool                                            { return false }
func (nodeStrategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (nodeStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (nodeStrategy) Validate(context.Context, runtime.Object) field.ErrorList         { return nil }
func (nodeStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}
func (nodeStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (nodeStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (nodeStrategy) Canonicalize(runtime.Object)    {}
func (nodeStrategy) AllowCreateOnUpdate() bool      { return false }
func (nodeStrategy) AllowUnconditionalUpdate() bool { return true }

func newNodes(t *testing.T, nodes ...*corev1.Node) *generic.Store {
	t.Helper()
	store, err := generic.NewStore(registrytest.Options(t), corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                  func() runtime.Object { return &corev1.Node{} },
		NewListFunc:              func() runtime.Object { return &corev1.NodeList{} },
		DefaultQualifiedResource: corev1.Resource("nodes"),
		CreateStrategy:           nodeStrategy{},
		UpdateStrategy:           nodeStrategy{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Destroy)
	for _, n := range nodes {
		if _, err := store.Create(registrytest.Context("", "v1", "nodes", ""), n, nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

// fakeKubelet is a TLS server on the loopback interface answering as a
// kubelet does: logs, and exec upgrades that echo what they receive.
type fakeKubelet struct {
	srv  *httptest.Server
	port int32
	mu   sync.Mutex
	reqs []string
}

func startKubelet(t *testing.T) *fakeKubelet {
	t.Helper()
	k := &fakeKubelet{}
	k.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.reqs = append(k.reqs, r.Method+" "+r.URL.RequestURI())
		k.mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/containerLogs/"):
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "hello from the kubelet\n")
		case strings.HasPrefix(r.URL.Path, "/exec/") && r.Header.Get("Upgrade") != "":
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprint(buf, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+r.Header.Get("Upgrade")+"\r\n\r\n")
			_ = buf.Flush()
			line, _ := buf.ReadString('\n')
			fmt.Fprint(conn, "echo: "+line)
		default:
			http.Error(w, "unexpected", http.StatusTeapot)
		}
	}))
	t.Cleanup(k.srv.Close)
	_, port, _ := net.SplitHostPort(k.srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	k.port = int32(p)
	return k
}

func (k *fakeKubelet) requests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.reqs...)
}

// serve is an API server in miniature for one connect subresource: the
// request for pod name is resolved by c and answered, errors as Status.
func serve(t *testing.T, c rest.Connecter, sub string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		ctx := request.WithNamespace(r.Context(), "default")
		ctx = request.WithRequestInfo(ctx, &request.RequestInfo{
			IsResourceRequest: true, APIPrefix: "api", APIVersion: "v1", Namespace: "default",
			Resource: "pods", Name: parts[0], Subresource: sub, Parts: append([]string{"pods"}, parts...),
		})
		r = r.WithContext(ctx)
		fail := func(w http.ResponseWriter, _ *http.Request, err error) { responsewriters.WriteError(w, err) }
		h, err := c.Connect(ctx, parts[0], r, fail)
		if err != nil {
			fail(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	code int
	body string
}

func call(t *testing.T, method, u string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	var st metav1.Status
	if json.Unmarshal(b, &st) == nil && st.Kind == "Status" {
		body = st.Message
	}
	return answer{resp.StatusCode, body}
}

// Expected answers: upstream's pod connection subresources
// (pkg/registry/core/pod/strategy.go LogLocation, ExecLocation,
// PortForwardLocation, ResourceLocation; the kubelet client's address
// choice; upgradeaware.go's "Upgrade request required" and "error
// dialing backend").
func TestPodConnections(t *testing.T) {
	kubelet := startKubelet(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	nodes := newNodes(t,
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "up"}, Status: corev1.NodeStatus{
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "192.0.2.1"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: kubelet.port}},
		}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "down"}, Status: corev1.NodeStatus{
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(closedPort)}},
		}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "noaddress"}},
	)
	s := newStorage(t, nodes)
	create(t, s, newPod("pending"))
	create(t, s, newPod("two", func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b", Image: "busybox"})
	}))
	for pod, node := range map[string]string{"web": "up", "down": "down", "lost": "gone", "noaddr": "noaddress"} {
		create(t, s, newPod(pod))
		if err := bind(t, s, pod, node); err != nil {
			t.Fatal(err)
		}
	}

	logs := serve(t, s.Log, "log")
	for _, c := range []struct {
		path string
		want answer
	}{
		{"/pending/log", answer{204, ""}},
		{"/two/log", answer{400, "a container name must be specified for pod two, choose one of: [app b]"}},
		{"/two/log?container=c", answer{400, "container c is not valid for pod two"}},
		{"/web/log?tailLines=-1", answer{422, `PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`}},
		{"/web/log?tailLines=x", answer{400, `strconv.ParseInt: parsing "x": invalid syntax`}},
		{"/missing/log", answer{404, `pods "missing" not found`}},
		// As kube-apiserver v1.37.2 answers (probed 2026-11-28): the missing
		// node is named by the request's resource, and a node without an
		// address is a plain 500 (no InternalError reason or prefix).
		{"/lost/log", answer{404, `pods "gone" not found`}},
		{"/noaddr/log", answer{500, "no preferred addresses found; known addresses: []"}},
		{"/web/log?follow=true&tailLines=5", answer{200, "hello from the kubelet\n"}},
	} {
		if got := call(t, "GET", logs.URL+c.path); got != c.want {
			t.Errorf("GET %s: got %+v, want %+v", c.path, got, c.want)
		}
	}
	// The kubelet got the log request at its internal address (the
	// preferred type before ExternalIP) with the options.
	if got := kubelet.requests(); len(got) != 1 || got[0] != "GET /containerLogs/default/web/app?follow=true&tailLines=5" {
		t.Errorf("kubelet got %q", got)
	}

	exec := serve(t, s.Exec, "exec")
	for _, c := range []struct {
		path    string
		headers []string
		want    answer
	}{
		{"/pending/exec?command=ls", nil, answer{400, "pod pending does not have a host assigned"}},
		{"/web/exec?command=ls", nil, answer{400, "Upgrade request required"}},
		{"/lost/exec?command=ls", []string{"Connection", "Upgrade", "Upgrade", "websocket"}, answer{404, `pods "gone" not found`}},
	} {
		if got := call(t, "POST", exec.URL+c.path, c.headers...); got != c.want {
			t.Errorf("POST %s: got %+v, want %+v", c.path, got, c.want)
		}
	}
	down := call(t, "POST", exec.URL+"/down/exec?command=ls", "Connection", "Upgrade", "Upgrade", "SPDY/3.1")
	if down.code != 500 || !strings.Contains(down.body, "error dialing backend: dial tcp 127.0.0.1:") || !strings.Contains(down.body, "connection refused") {
		t.Errorf("exec on an unreachable kubelet: got %+v", down)
	}

	// An upgrade reaches the kubelet and the two connections are joined.
	u, _ := url.Parse(exec.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /web/exec?command=sh&stdin=true&stdout=1&tty=false HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n", u.Host)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: got %v %v", resp, err)
	}
	fmt.Fprint(conn, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "echo: ping\n" {
		t.Errorf("through the upgraded connection: got %q %v", line, err)
	}
	if got := kubelet.requests(); got[len(got)-1] != "POST /exec/default/web/app?command=sh&stdin=1&stdout=1" {
		t.Errorf("kubelet got %q", got[len(got)-1])
	}

	pf := serve(t, s.PortForward, "portforward")
	if got := call(t, "POST", pf.URL+"/web/portforward?ports=x"); got.code != 400 {
		t.Errorf("portforward with a bad port: got %+v", got)
	}
	if got := call(t, "POST", pf.URL+"/pending/portforward?ports=80"); got != (answer{400, "pod pending does not have a host assigned"}) {
		t.Errorf("portforward of a pending pod: got %+v", got)
	}

	proxy := serve(t, s.Proxy, "proxy")
	for _, c := range []struct {
		path string
		want answer
	}{
		{"/web/proxy/healthz", answer{400, "address not allowed"}},
		{"/ftp:web:80/proxy/", answer{400, `invalid pod request "ftp:web:80"`}},
		{"/missing/proxy/", answer{404, `pods "missing" not found`}},
	} {
		if got := call(t, "GET", proxy.URL+c.path); got != c.want {
			t.Errorf("GET %s: got %+v, want %+v", c.path, got, c.want)
		}
	}
}
