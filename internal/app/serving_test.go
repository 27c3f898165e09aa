package app_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/pkg/server"
)

func statusOf(t *testing.T, res result) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal([]byte(res.body), &s); err != nil {
		t.Fatalf("not a Status: %d %q: %v", res.code, res.body, err)
	}
	if s.Kind != "Status" || s.APIVersion != "v1" {
		t.Fatalf("not a v1 Status: %q", res.body)
	}
	return s
}

func TestAnonymousMayOnlyReachHealthAndVersion(t *testing.T) {
	r := startKapi(t, nil)
	anon := r.anonymous()
	// What RBAC's system:public-info-viewer (bound to
	// system:unauthenticated) allows: the roots, not their sub-paths.
	for _, p := range []string{"/healthz", "/livez", "/readyz", "/healthz?verbose", "/version", "/version/"} {
		if res := do(anon, http.MethodGet, r.base+p); res.code != 200 {
			t.Errorf("anonymous GET %s: got %d %q, want 200", p, res.code, res.body)
		}
	}
	for _, tc := range []struct{ path, msg string }{
		{"/metrics", `forbidden: User "system:anonymous" cannot get path "/metrics"`},
		{"/readyz/ping", `forbidden: User "system:anonymous" cannot get path "/readyz/ping"`},
		{"/livez/log", `forbidden: User "system:anonymous" cannot get path "/livez/log"`},
		{"/", `forbidden: User "system:anonymous" cannot get path "/"`},
		{"/api/v1/namespaces/default/configmaps", `configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"`},
		{"/apis/apps/v1/deployments", `deployments.apps is forbidden: User "system:anonymous" cannot list resource "deployments" in API group "apps" at the cluster scope`},
	} {
		res := do(anon, http.MethodGet, r.base+tc.path)
		if res.code != http.StatusForbidden {
			t.Fatalf("anonymous GET %s: got %d, want 403", tc.path, res.code)
		}
		if s := statusOf(t, res); s.Reason != metav1.StatusReasonForbidden || s.Message != tc.msg {
			t.Fatalf("anonymous GET %s: got %q (%s), want %q", tc.path, s.Message, s.Reason, tc.msg)
		}
	}
}

// foreignClientCert returns a client certificate from a CA kapi does not
// trust.
func foreignClientCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "mallory", Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// clientCertFromKapiCA signs a client certificate for user/groups with the
// CA in the server's cert dir.
func clientCertFromKapiCA(t *testing.T, r *running, name string, groups ...string) tls.Certificate {
	t.Helper()
	dir := r.opts.SecureServing.CertDir
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := pem.Decode(caPEM)
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := pem.Decode(keyPEM)
	caKey, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func (r *running) clientWithCert(cert tls.Certificate) *http.Client {
	anon := r.anonymous()
	tr := anon.Transport.(*http.Transport)
	// Send the certificate even when the server's CA list does not name
	// its issuer (Go's client would otherwise send none).
	tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	return anon
}

func TestUntrustedClientCertificateIs401(t *testing.T) {
	r := startKapi(t, nil)
	res := do(r.clientWithCert(foreignClientCert(t)), http.MethodGet, r.base+"/api")
	if res.code != http.StatusUnauthorized {
		t.Fatalf("got %d %q, want 401", res.code, res.body)
	}
	if s := statusOf(t, res); s.Reason != metav1.StatusReasonUnauthorized || s.Message != "Unauthorized" {
		t.Fatalf("got %+v", s)
	}
}

func TestBadInputGetsClearErrors(t *testing.T) {
	r := startKapi(t, nil)
	addr := strings.TrimPrefix(r.base, "https://")

	t.Run("plain HTTP to the TLS port", func(t *testing.T) {
		resp, err := http.Get("http://" + addr + "/version")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), "Client sent an HTTP request to an HTTPS server.") {
			t.Fatalf("got %d %q", resp.StatusCode, body)
		}
	})
	t.Run("garbage instead of a TLS handshake", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = conn.Write([]byte("\x16\x03\x01\x00\x05garbage-garbage-garbage\r\n\r\n"))
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.ReadAll(conn) // the server closes the connection
		conn.Close()
	})
	t.Run("garbage HTTP over TLS", func(t *testing.T) {
		tc := r.anonymous().Transport.(*http.Transport).TLSClientConfig.Clone()
		tc.NextProtos = []string{"http/1.1"}
		conn, err := tls.Dial("tcp", addr, tc)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = conn.Write([]byte("NOT AN HTTP REQUEST\r\n\r\n"))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("got %d, want 400", resp.StatusCode)
		}
	})
	t.Run("oversized headers", func(t *testing.T) {
		for _, http1 := range []bool{true, false} {
			req, _ := http.NewRequest(http.MethodGet, r.base+"/version", nil)
			req.Header.Set("X-Big", strings.Repeat("a", 2<<20))
			resp, err := r.client(http1).Do(req)
			if http1 {
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
					t.Fatalf("HTTP/1.1: got %d, want 431", resp.StatusCode)
				}
				continue
			}
			// HTTP/2 refuses the header list before sending it.
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
					t.Fatalf("HTTP/2: got %d, want an error or 431", resp.StatusCode)
				}
			}
		}
	})
	t.Run("bad timeout parameter", func(t *testing.T) {
		res := do(r.client(false), http.MethodGet, r.base+"/version?timeout=banana")
		if res.code != 400 {
			t.Fatalf("got %d %q", res.code, res.body)
		}
		if s := statusOf(t, res); s.Message != `invalid timeout specified in the request URL - time: invalid duration "banana"` {
			t.Fatalf("got %q", s.Message)
		}
	})
	t.Run("unknown path", func(t *testing.T) {
		res := do(r.client(false), http.MethodGet, r.base+"/no/such/path")
		if res.code != 404 || res.body != "404 page not found\n" {
			t.Fatalf("got %d %q", res.code, res.body)
		}
	})
	// After all of that the server still serves.
	if res := do(r.client(false), http.MethodGet, r.base+"/readyz"); res.code != 200 {
		t.Fatalf("server unhealthy after bad input: %d %q", res.code, res.body)
	}
}

func TestRequestTimeoutAndPanicRecovery(t *testing.T) {
	r := startKapi(t, func(head *server.GenericServer) {
		// A stuck handler that ignores its context: only the timeout
		// filter can answer for it.
		head.Handler().NonRESTMux.Handle("/test/slow", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(2 * time.Second)
			_, _ = io.WriteString(w, "too late")
		}))
		head.Handler().NonRESTMux.Handle("/test/panic", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	}, func(o *app.Options) { o.Run.RequestTimeout = 500 * time.Millisecond })
	c := r.client(false)
	res := do(c, http.MethodGet, r.base+"/test/slow")
	if res.code != http.StatusGatewayTimeout {
		t.Fatalf("got %d %q, want 504", res.code, res.body)
	}
	// Upstream encodes it with json.Encoder, hence the newline.
	if res.body != `{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}`+"\n" {
		t.Fatalf("504 body %q", res.body)
	}
	for _, http1 := range []bool{false, true} {
		res = do(r.client(http1), http.MethodGet, r.base+"/test/panic")
		if res.err == nil && res.code != 500 {
			t.Fatalf("panic: got %d, want an aborted response", res.code)
		}
	}
	if res := do(c, http.MethodGet, r.base+"/version"); res.code != 200 {
		t.Fatalf("server not serving after a panic: %+v", res)
	}
}

func TestMaxInFlightRejectsWith429(t *testing.T) {
	started := make(chan struct{}, 1)
	r := startKapi(t, func(head *server.GenericServer) {
		head.Handler().NonRESTMux.Handle("/test/slow", slowHandler(2*time.Second, started))
	}, func(o *app.Options) {
		o.Run.MaxRequestsInFlight = 1
		// Max-in-flight is what replaces API Priority and Fairness when off.
		o.FlowControl.EnablePriorityAndFairness = false
	})
	// system:masters bypasses the limit, so use an ordinary user, whom
	// RBAC lets reach the slow path.
	admin := kubernetes.NewForConfigOrDie(r.rest)
	if _, err := admin.RbacV1().ClusterRoles().Create(context.Background(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "slow"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/test/slow"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(context.Background(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "slow"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "slow"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "jane"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := r.clientWithCert(clientCertFromKapiCA(t, r, "jane", "developers"))
	// The binding reaches the authorizer's informer asynchronously.
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, err := admin.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "jane", NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/test/slow", Verb: "get"}}}, metav1.CreateOptions{})
		if err == nil && a.Status.Allowed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jane never allowed /test/slow: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The single slot may be held for a moment by another limited request
	// (the slow request then gets the 429 itself): try again until the
	// slow request holds it, rather than waiting for a start that never
	// comes.
	slow := make(chan result, 1)
	deadline = time.Now().Add(30 * time.Second)
	for holding := false; !holding; {
		go func() { slow <- do(c, http.MethodGet, r.base+"/test/slow") }()
		select {
		case <-started:
			holding = true
		case res := <-slow:
			if res.code != http.StatusTooManyRequests || time.Now().After(deadline) {
				t.Fatalf("slow request ended before it started: %+v", res)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	res := do(c, http.MethodGet, r.base+"/version")
	if res.code != http.StatusTooManyRequests || res.header.Get("Retry-After") != "1" {
		t.Fatalf("got %d Retry-After=%q, want 429 with Retry-After: 1", res.code, res.header.Get("Retry-After"))
	}
	// Upstream's max-in-flight filter answers with plain text (http.Error).
	if res.body != "Too many requests, please try again later.\n" || res.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("got %q (%s)", res.body, res.header.Get("Content-Type"))
	}
	// The admin (system:masters) is not limited.
	if res := do(r.client(false), http.MethodGet, r.base+"/version"); res.code != 200 {
		t.Fatalf("admin limited: %d", res.code)
	}
	if res := <-slow; res.code != 200 {
		t.Fatalf("slow: %+v", res)
	}
}

func TestIndexMetricsAndOpenAPI(t *testing.T) {
	r := startKapi(t, nil)
	c := r.client(false)
	res := do(c, http.MethodGet, r.base+"/")
	var idx metav1.RootPaths
	if err := json.Unmarshal([]byte(res.body), &idx); err != nil || res.code != 200 {
		t.Fatalf("index: %d %q %v", res.code, res.body, err)
	}
	for _, p := range []string{"/healthz", "/livez", "/readyz", "/readyz/shutdown", "/metrics", "/version", "/openapi/v2", "/openapi/v3", "/livez/poststarthook/start-apiextensions-controllers"} {
		found := false
		for _, q := range idx.Paths {
			found = found || q == p
		}
		if !found {
			t.Errorf("index lacks %s: %v", p, idx.Paths)
		}
	}
	do(c, http.MethodGet, r.base+"/version")
	res = do(c, http.MethodGet, r.base+"/metrics")
	if res.code != 200 || !contains(res.body, "apiserver_request_total{", "go_goroutines", "process_resident_memory_bytes", `kubernetes_healthchecks_total{name="ping",status="success",type="readyz"}`) {
		t.Fatalf("metrics lack expected series: %d\n%.2000s", res.code, res.body)
	}
	res = do(c, http.MethodGet, r.base+"/openapi/v2")
	var v2 map[string]any
	if err := json.Unmarshal([]byte(res.body), &v2); err != nil || v2["swagger"] != "2.0" {
		t.Fatalf("openapi v2: %d %.200q", res.code, res.body)
	}
	req, _ := http.NewRequest(http.MethodGet, r.base+"/openapi/v2", nil)
	req.Header.Set("Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
		t.Fatalf("openapi v2 protobuf content type %q", ct)
	}
	res = do(c, http.MethodGet, r.base+"/openapi/v3")
	var v3 map[string]any
	if err := json.Unmarshal([]byte(res.body), &v3); err != nil || v3["paths"] == nil {
		t.Fatalf("openapi v3: %d %q", res.code, res.body)
	}
}

func TestAdminKubeconfigAndPKIReusedAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	setDir := func(o *app.Options) { o.DataDir = dir }
	r := startKapi(t, nil, setDir)
	st, err := os.Stat(filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("admin kubeconfig mode %v, want 0600", st.Mode().Perm())
	}
	ca1, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	serving1, _ := os.ReadFile(filepath.Join(dir, "pki", "apiserver.crt"))
	r.shutdown()
	if err := r.runErr(); err != nil {
		t.Fatal(err)
	}

	r2 := startKapi(t, nil, setDir) // waits for /readyz with the rewritten kubeconfig
	ca2, _ := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	serving2, _ := os.ReadFile(filepath.Join(dir, "pki", "apiserver.crt"))
	if string(ca1) != string(ca2) || string(serving1) != string(serving2) {
		t.Fatal("certificates were regenerated on restart, want them reused")
	}
	if res := do(r2.client(false), http.MethodGet, r2.base+"/version"); res.code != 200 {
		t.Fatalf("restarted server: %+v", res)
	}
}

// --tls-cipher-suites reaches the listener: the suites named are the only
// TLS 1.2 suites served.
func TestTLSCipherSuitesFlag(t *testing.T) {
	r := startKapi(t, nil, func(o *app.Options) {
		o.SecureServing.TLSCipherSuites = []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"}
	})
	tc := r.anonymous().Transport.(*http.Transport).TLSClientConfig.Clone()
	tc.MaxVersion = tls.VersionTLS12
	host := strings.TrimPrefix(r.base, "https://")
	for _, tt := range []struct {
		offer  uint16
		wantOK bool
	}{
		{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, true},
		{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, false},
	} {
		cfg := tc.Clone()
		cfg.CipherSuites = []uint16{tt.offer}
		conn, err := tls.Dial("tcp", host, cfg)
		if err == nil {
			conn.Close()
		}
		if (err == nil) != tt.wantOK {
			t.Errorf("offering %s: got err %v, want success %v", tls.CipherSuiteName(tt.offer), err, tt.wantOK)
		}
	}
}
