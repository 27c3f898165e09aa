package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/internal/testx509"
	"github.com/kapi-dev/kapi/kapitest"
)

// Audit annotations and errors of kube-apiserver v1.37.2 (built with Go
// 1.26, as kapi) for the two kinds of deprecated serving certificate
// (k8s.io/apiserver pkg/util/x509metrics; Go's crypto/x509 texts).
const (
	sanAnnotation  = "missing-san.invalid-cert.kubernetes.io/localhost"
	sanReason      = "relies on a legacy Common Name field instead of the SAN extension for subject validation"
	sha1Annotation = "insecure-sha1.invalid-cert.kubernetes.io/localhost"
	sha1Reason     = "uses an insecure SHA-1 signature"
	legacyCNError  = "x509: certificate relies on legacy Common Name field, use SANs instead"
	sha1Error      = `x509: certificate signed by unknown authority (possibly because of "x509: cannot verify signature: insecure algorithm SHA1-RSA" while trying to verify candidate authority certificate "x509-e2e-ca")`
)

// swappableTLSServer serves handler on 127.0.0.1 with whatever
// certificate was last stored in cert, without keep-alives: every request
// is a new connection and handshake, so a new certificate applies to the
// next one.
func swappableTLSServer(t *testing.T, handler http.Handler) (*httptest.Server, *atomic.Pointer[tls.Certificate]) {
	t.Helper()
	var cert atomic.Pointer[tls.Certificate]
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.SetKeepAlivesEnabled(false)
	srv.Config.ErrorLog = nil
	srv.TLS = &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return cert.Load(), nil }}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &cert
}

// counterValue is the value of the unlabelled counter family name.
func counterValue(t *testing.T, cfg *rest.Config, name string) float64 {
	t.Helper()
	mf, ok := scrape(t, cfg)[name]
	if !ok || len(mf.GetMetric()) != 1 {
		t.Fatalf("%s: not one series in /metrics", name)
	}
	return mf.GetMetric()[0].GetCounter().GetValue()
}

func checkCounters(t *testing.T, cfg *rest.Config, subsystem string, san, sha1 float64) {
	t.Helper()
	if got := counterValue(t, cfg, "apiserver_"+subsystem+"_x509_missing_san_total"); got != san {
		t.Errorf("apiserver_%s_x509_missing_san_total = %v, want %v", subsystem, got, san)
	}
	if got := counterValue(t, cfg, "apiserver_"+subsystem+"_x509_insecure_sha1_total"); got != sha1 {
		t.Errorf("apiserver_%s_x509_insecure_sha1_total = %v, want %v", subsystem, got, sha1)
	}
}

// x509AuditEvent is what the tests read of a ResponseComplete event.
type x509AuditEvent struct {
	Verb           string            `json:"verb"`
	UserAgent      string            `json:"userAgent"`
	RequestURI     string            `json:"requestURI"`
	Annotations    map[string]string `json:"annotations"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// annotatedEvents returns the ResponseComplete events of the audit log at
// path that carry an annotation whose key ends in
// ".invalid-cert.kubernetes.io/localhost".
func annotatedEvents(t *testing.T, path string) []x509AuditEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []x509AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Stage string `json:"stage"`
			x509AuditEvent
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" {
			continue
		}
		for k := range ev.Annotations {
			if strings.HasSuffix(k, ".invalid-cert.kubernetes.io/localhost") {
				out = append(out, ev.x509AuditEvent)
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func startAudited(t *testing.T, more ...func(o *kapitest.Options)) (*kapitest.Server, string) {
	t.Helper()
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	srv := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) {
		o.AuditLogPath = auditPath
		o.Flags = append(o.Flags, "--audit-policy-file="+testaudit.MetadataPolicy(t), "--authorization-mode=AlwaysAllow")
		for _, m := range more {
			m(o)
		}
	}))
	return srv, auditPath
}

// TestWebhookX509Counters points a validating admission webhook (by URL,
// https://localhost:<port>, verified with its caBundle) at a TLS server
// on 127.0.0.1 whose certificate is first CN-only, then SHA-1-signed,
// then valid: the create it should admit fails as kube-apiserver's does
// (Go refuses the certificate), apiserver_webhooks_x509_* count each
// failure once, and the create's audit event carries upstream's
// annotation.
func TestWebhookX509Counters(t *testing.T) {
	srv, auditPath := startAudited(t)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ca := testx509.NewCA(t, "x509-e2e-ca", testx509.RSA)
	hook, cert := swappableTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req, _ := review["request"].(map[string]any)
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": review["apiVersion"], "kind": "AdmissionReview",
			"response": map[string]any{"uid": req["uid"], "allowed": true}})
	}))
	cert.Store(ca.Leaf(t, "localhost", x509.SHA256WithRSA, testx509.CNOnly))
	_, port, _ := net.SplitHostPort(hook.Listener.Addr().String())

	checkCounters(t, srv.Config, "webhooks", 0, 0)
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "x509"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "x509.example.com",
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"x509": "yes"}},
			FailurePolicy:  &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptrTo("https://localhost:" + port + "/validate"), CABundle: ca.PEM},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create := func() error {
		_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			GenerateName: "x509-", Labels: map[string]string{"x509": "yes"}}}, metav1.CreateOptions{})
		return err
	}
	// The configuration is in force once a create fails.
	var err error
	eventually(t, 30*time.Second, "the webhook in force", func() error {
		if err = create(); err == nil {
			return fmt.Errorf("create admitted")
		}
		return nil
	})
	wantPrefix := `Internal error occurred: failed calling webhook "x509.example.com": failed to call webhook: Post "https://localhost:` + port + `/validate?timeout=10s": tls: failed to verify certificate: `
	if err.Error() != wantPrefix+legacyCNError {
		t.Errorf("CN-only certificate: create failed with\n%v\nwant\n%s", err, wantPrefix+legacyCNError)
	}
	checkCounters(t, srv.Config, "webhooks", 1, 0)

	cert.Store(ca.Leaf(t, "localhost", x509.SHA1WithRSA, testx509.SAN("localhost")))
	if err := create(); err == nil || err.Error() != wantPrefix+sha1Error {
		t.Errorf("SHA-1 certificate: create failed with\n%v\nwant\n%s", err, wantPrefix+sha1Error)
	}
	checkCounters(t, srv.Config, "webhooks", 1, 1)

	cert.Store(ca.Leaf(t, "localhost", x509.SHA256WithRSA, testx509.SAN("localhost")))
	if err := create(); err != nil {
		t.Errorf("valid certificate: %v", err)
	}
	checkCounters(t, srv.Config, "webhooks", 1, 1)
	checkCounters(t, srv.Config, "kube_aggregator", 0, 0)

	var events []x509AuditEvent
	eventually(t, 10*time.Second, "two annotated audit events", func() error {
		if events = annotatedEvents(t, auditPath); len(events) != 2 {
			return fmt.Errorf("%d events: %+v", len(events), events)
		}
		return nil
	})
	want := []map[string]string{{sanAnnotation: sanReason}, {sha1Annotation: sha1Reason}}
	for i, ev := range events {
		if ev.Verb != "create" || ev.RequestURI != "/api/v1/namespaces/default/configmaps" || ev.ResponseStatus.Code != http.StatusInternalServerError {
			t.Errorf("event %d: %s %s %d", i, ev.Verb, ev.RequestURI, ev.ResponseStatus.Code)
		}
		for k, v := range want[i] {
			if ev.Annotations[k] != v {
				t.Errorf("event %d: annotation %s = %q, want %q (all: %v)", i, k, ev.Annotations[k], v, ev.Annotations)
			}
		}
		for k := range ev.Annotations {
			if strings.Contains(k, ".invalid-cert.") && want[i][k] == "" {
				t.Errorf("event %d: unexpected annotation %s", i, k)
			}
		}
	}
}

// apiServiceBackend serves the discovery document of group/v1 and an
// empty list of "things" in it.
func apiServiceBackend(group string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/" + group + "/v1":
			_ = json.NewEncoder(w).Encode(metav1.APIResourceList{
				TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: group + "/v1",
				APIResources: []metav1.APIResource{{Name: "things", Kind: "Thing", Namespaced: false, Verbs: metav1.Verbs{"list"}}},
			})
		case "/apis/" + group + "/v1/things":
			_, _ = io.WriteString(w, `{"apiVersion":"`+group+`/v1","kind":"ThingList","metadata":{},"items":[]}`)
		default:
			http.NotFound(w, r)
		}
	})
}

// registerX509APIService creates the ExternalName Service name (at
// localhost) and the APIService v1.<group> on it at port.
func registerX509APIService(t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface, name, group, port string, spec map[string]any) {
	t.Helper()
	makeExternalService(t, cs, name)
	spec["group"], spec["version"] = group, "v1"
	spec["service"] = map[string]any{"namespace": "default", "name": name, "port": int64(portOf(t, "127.0.0.1:"+port))}
	spec["groupPriorityMinimum"], spec["versionPriority"] = int64(1000), int64(15)
	if _, err := dyn.Resource(apiServiceGVR).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1." + group}, "spec": spec,
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create APIService v1.%s: %v", group, err)
	}
	eventually(t, time.Minute, "v1."+group+" Available", func() error {
		u, err := dyn.Resource(apiServiceGVR).Get(context.Background(), "v1."+group, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Available" && m["status"] == "True" {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", conds)
	})
}

// TestAggregatorX509Counters proxies to APIService backends on 127.0.0.1
// (ExternalName Services at localhost): one not verified
// (insecureSkipTLSVerify) whose certificate is CN-only and SHA-1-signed,
// where a proxied request succeeds and counts both; one verified with its
// caBundle, Available with a valid certificate, whose certificate is then
// replaced by a CN-only and then a SHA-1-signed one: the proxied request
// fails (503 with Go's error, as kube-apiserver's proxy) and counts. The
// aggregator's discovery and OpenAPI fetches and the in-process
// controllers' discovery requests count too (as upstream's, made through
// its proxy handler, and a kube-controller-manager's), at times of their
// own, so the counts are checked as lower bounds: each of the test's
// requests adds at least one, every annotated request is counted, and the
// test's own requests carry exactly the annotations expected.
func TestAggregatorX509Counters(t *testing.T) {
	// Availability is probed when an APIService is created and then once
	// an hour: the verified backend stays Available while its certificate
	// changes, as it would between two probes.
	srv, auditPath := startAudited(t, func(o *kapitest.Options) { o.APIServiceAvailabilityPeriod = time.Hour })
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	dyn := dynamic.NewForConfigOrDie(srv.Config)
	ca := testx509.NewCA(t, "x509-e2e-ca", testx509.RSA)
	client, err := rest.HTTPClientFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	const userAgent = "x509-e2e"
	get := func(path string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.Config.Host+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", userAgent)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// getOK waits for the proxy to serve path (it follows the APIService's
	// status a moment after the status is written).
	getOK := func(path string) {
		t.Helper()
		eventually(t, 30*time.Second, "GET "+path, func() error {
			if code, body := get(path); code != http.StatusOK {
				return fmt.Errorf("%d %s", code, body)
			}
			return nil
		})
	}
	checkCounters(t, srv.Config, "kube_aggregator", 0, 0)
	counts := func() (san, sha1 float64) {
		t.Helper()
		return counterValue(t, srv.Config, "apiserver_kube_aggregator_x509_missing_san_total"),
			counterValue(t, srv.Config, "apiserver_kube_aggregator_x509_insecure_sha1_total")
	}

	insecure, insecureCert := swappableTLSServer(t, apiServiceBackend("insecure.x509.example.com"))
	insecureCert.Store(ca.Leaf(t, "x509-insecure.default.svc", x509.SHA1WithRSA, testx509.CNOnly))
	_, port, _ := net.SplitHostPort(insecure.Listener.Addr().String())
	registerX509APIService(t, cs, dyn, "x509-insecure", "insecure.x509.example.com", port, map[string]any{"insecureSkipTLSVerify": true})
	getOK("/apis/insecure.x509.example.com/v1/things")
	if san, sha1 := counts(); san < 1 || sha1 < 1 {
		t.Errorf("after a request to the insecure backend: counts %v, %v; want at least 1, 1", san, sha1)
	}

	verified, verifiedCert := swappableTLSServer(t, apiServiceBackend("verified.x509.example.com"))
	verifiedCert.Store(ca.Leaf(t, "x509-verified.default.svc", x509.SHA256WithRSA, testx509.SAN("x509-verified.default.svc")))
	_, port, _ = net.SplitHostPort(verified.Listener.Addr().String())
	registerX509APIService(t, cs, dyn, "x509-verified", "verified.x509.example.com", port, map[string]any{"caBundle": ca.PEM})
	getOK("/apis/verified.x509.example.com/v1/things")

	verifiedCert.Store(ca.Leaf(t, "x509-verified.default.svc", x509.SHA256WithRSA, testx509.CNOnly))
	sanBefore, _ := counts()
	if code, body := get("/apis/verified.x509.example.com/v1/things"); code != http.StatusServiceUnavailable || !strings.Contains(body, "tls: failed to verify certificate: "+legacyCNError) {
		t.Errorf("verified backend, CN-only certificate: %d %q", code, body)
	}
	if san, _ := counts(); san < sanBefore+1 {
		t.Errorf("CN-only certificate: missing SAN count %v, was %v", san, sanBefore)
	}
	verifiedCert.Store(ca.Leaf(t, "x509-verified.default.svc", x509.SHA1WithRSA, testx509.SAN("x509-verified.default.svc")))
	_, sha1Before := counts()
	if code, body := get("/apis/verified.x509.example.com/v1/things"); code != http.StatusServiceUnavailable || !strings.Contains(body, "tls: failed to verify certificate: "+sha1Error) {
		t.Errorf("verified backend, SHA-1 certificate: %d %q", code, body)
	}
	if _, sha1 := counts(); sha1 < sha1Before+1 {
		t.Errorf("SHA-1 certificate: SHA-1 count %v, was %v", sha1, sha1Before)
	}

	// Every request annotated in the audit log was counted (read the log
	// first: a request may be in flight).
	var events []x509AuditEvent
	eventually(t, 30*time.Second, "every annotated request counted", func() error {
		events = annotatedEvents(t, auditPath)
		var san, sha1 float64
		for _, ev := range events {
			if ev.Annotations[sanAnnotation] == sanReason {
				san++
			}
			if ev.Annotations[sha1Annotation] == sha1Reason {
				sha1++
			}
		}
		gotSAN, gotSHA1 := counts()
		if gotSAN < san || gotSHA1 < sha1 {
			return fmt.Errorf("counters %v, %v; annotated requests %v, %v", gotSAN, gotSHA1, san, sha1)
		}
		return nil
	})
	checkCounters(t, srv.Config, "webhooks", 0, 0)
	var own []x509AuditEvent
	for _, ev := range events {
		if ev.UserAgent == userAgent {
			own = append(own, ev)
		}
	}
	want := []struct {
		uri         string
		code        int
		annotations map[string]string
	}{
		{"/apis/insecure.x509.example.com/v1/things", http.StatusOK, map[string]string{sanAnnotation: sanReason, sha1Annotation: sha1Reason}},
		{"/apis/verified.x509.example.com/v1/things", http.StatusServiceUnavailable, map[string]string{sanAnnotation: sanReason}},
		{"/apis/verified.x509.example.com/v1/things", http.StatusServiceUnavailable, map[string]string{sha1Annotation: sha1Reason}},
	}
	if len(own) != len(want) {
		t.Fatalf("%d annotated requests of the test, want %d: %+v", len(own), len(want), own)
	}
	for i, ev := range own {
		if ev.RequestURI != want[i].uri || ev.ResponseStatus.Code != want[i].code {
			t.Errorf("event %d: %s %d, want %s %d", i, ev.RequestURI, ev.ResponseStatus.Code, want[i].uri, want[i].code)
		}
		for k := range ev.Annotations {
			if strings.Contains(k, ".invalid-cert.") && want[i].annotations[k] == "" {
				t.Errorf("event %d: unexpected annotation %s", i, k)
			}
		}
		for k, v := range want[i].annotations {
			if ev.Annotations[k] != v {
				t.Errorf("event %d: annotation %s = %q, want %q", i, k, ev.Annotations[k], v)
			}
		}
	}
}
