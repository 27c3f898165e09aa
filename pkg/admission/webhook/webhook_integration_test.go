package webhook_test

import (
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
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

// hookServer is a loopback HTTPS admission webhook whose behaviour is
// chosen by the request path.
type hookServer struct {
	srv      *httptest.Server
	caBundle []byte
	mu       sync.Mutex
	calls    map[string]int
	versions map[string]string // path -> last AdmissionReview apiVersion
	requests map[string]*admissionv1.AdmissionRequest
}

// newCert makes a self-signed serving certificate for 127.0.0.1,
// localhost and the in-cluster name of the test's Service.
func newCert(t testing.TB) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
		DNSNames:    []string{"localhost", "hooks.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func startHooks(t *testing.T) *hookServer { return startHooksTB(t) }

func startHooksTB(t testing.TB) *hookServer {
	cert, ca := newCert(t)
	h := &hookServer{caBundle: ca, calls: map[string]int{}, versions: map[string]string{}, requests: map[string]*admissionv1.AdmissionRequest{}}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	h.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	h.srv.StartTLS()
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookServer) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[path]
}

func (h *hookServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var review admissionv1.AdmissionReview
	_ = json.Unmarshal(body, &review)
	h.mu.Lock()
	h.calls[r.URL.Path]++
	h.versions[r.URL.Path] = review.APIVersion
	h.requests[r.URL.Path] = review.Request
	h.mu.Unlock()
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	var obj struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(review.Request.Object.Raw, &obj)
	switch r.URL.Path {
	case "/slow":
		time.Sleep(3 * time.Second)
	case "/garbage":
		_, _ = w.Write([]byte("this is not an AdmissionReview"))
		return
	case "/deny":
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: 403, Message: "configmaps named " + obj.Metadata.Name + " are not welcome"}
	case "/warn":
		resp.Warnings = []string{"careful with " + obj.Metadata.Name}
		resp.AuditAnnotations = map[string]string{"seen": "yes"}
	case "/label", "/label2":
		// Adds label <path>=<count of labels seen>, so that a reinvoked
		// webhook shows it saw the other's label.
		key := strings.TrimPrefix(r.URL.Path, "/")
		var patch []map[string]any
		if obj.Metadata.Labels == nil {
			patch = append(patch, map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{}})
		}
		if _, ok := obj.Metadata.Labels[key]; ok && r.URL.Path == "/label" {
			// Already there: record what it sees now.
			patch = append(patch, map[string]any{"op": "replace", "path": "/metadata/labels/" + key, "value": strconv.Itoa(len(obj.Metadata.Labels))})
		} else if !ok {
			patch = append(patch, map[string]any{"op": "add", "path": "/metadata/labels/" + key, "value": strconv.Itoa(len(obj.Metadata.Labels))})
		}
		if len(patch) > 0 {
			resp.Patch, _ = json.Marshal(patch)
			resp.PatchType = ptr.To(admissionv1.PatchTypeJSONPatch)
		}
	}
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (h *hookServer) url(path string) *string { return ptr.To(h.srv.URL + path) }

func configMapRule() []arv1.RuleWithOperations {
	return []arv1.RuleWithOperations{{
		Operations: []arv1.OperationType{arv1.Create, arv1.Update},
		Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
}

func mutatingHook(name string, cc arv1.WebhookClientConfig, mutate func(*arv1.MutatingWebhook)) arv1.MutatingWebhook {
	w := arv1.MutatingWebhook{
		Name: name, ClientConfig: cc, Rules: configMapRule(),
		SideEffects: ptr.To(arv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"test": name}},
	}
	if mutate != nil {
		mutate(&w)
	}
	return w
}

func validatingHook(name string, cc arv1.WebhookClientConfig, mutate func(*arv1.ValidatingWebhook)) arv1.ValidatingWebhook {
	w := arv1.ValidatingWebhook{
		Name: name, ClientConfig: cc, Rules: configMapRule(),
		SideEffects: ptr.To(arv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"test": name}},
	}
	if mutate != nil {
		mutate(&w)
	}
	return w
}

func cm(name, test string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"test": test}}, Data: map[string]string{"k": "v"}}
}

// createEventually retries a create until the webhook configuration is
// in effect (it is watched: in effect within milliseconds) and check
// accepts its outcome.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	testwait.Until(t, 15*time.Second, 50*time.Millisecond, what, check)
}

func TestAdmissionWebhooks(t *testing.T) {
	hooks := startHooks(t)
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	s := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) { o.AuditLogPath = auditLog }), kapitest.WithFlags("--audit-policy-file="+testaudit.MetadataPolicy(t)))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	cc := func(path string) arv1.WebhookClientConfig {
		return arv1.WebhookClientConfig{URL: hooks.url(path), CABundle: hooks.caBundle}
	}
	port := int32(mustPort(t, hooks.srv.URL))

	// The Service the ExternalName webhook is reached through.
	if _, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "hooks"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	down := arv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/down"), CABundle: hooks.caBundle}
	_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &arv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "mutators"},
		Webhooks: []arv1.MutatingWebhook{
			mutatingHook("label.kapi.test", cc("/label"), nil),
			mutatingHook("down-ignore.kapi.test", down, func(w *arv1.MutatingWebhook) { w.FailurePolicy = ptr.To(arv1.Ignore) }),
			mutatingHook("down-fail.kapi.test", down, nil),
			mutatingHook("slow-fail.kapi.test", cc("/slow"), func(w *arv1.MutatingWebhook) { w.TimeoutSeconds = ptr.To[int32](1) }),
			mutatingHook("slow-ignore.kapi.test", cc("/slow"), func(w *arv1.MutatingWebhook) {
				w.TimeoutSeconds = ptr.To[int32](1)
				w.FailurePolicy = ptr.To(arv1.Ignore)
			}),
			mutatingHook("garbage-fail.kapi.test", cc("/garbage"), nil),
			mutatingHook("garbage-ignore.kapi.test", cc("/garbage"), func(w *arv1.MutatingWebhook) { w.FailurePolicy = ptr.To(arv1.Ignore) }),
			mutatingHook("side-effects.kapi.test", cc("/sideeffects"), func(w *arv1.MutatingWebhook) { w.SideEffects = ptr.To(arv1.SideEffectClassNoneOnDryRun) }),
			mutatingHook("reinvoke.kapi.test", cc("/label"), func(w *arv1.MutatingWebhook) {
				w.ReinvocationPolicy = ptr.To(arv1.IfNeededReinvocationPolicy)
				w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"test": "reinvoke"}}
			}),
			mutatingHook("reinvoke-2.kapi.test", cc("/label2"), func(w *arv1.MutatingWebhook) {
				w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"test": "reinvoke"}}
			}),
			mutatingHook("service.kapi.test", arv1.WebhookClientConfig{
				Service:  &arv1.ServiceReference{Namespace: "default", Name: "hooks", Path: ptr.To("/label"), Port: &port},
				CABundle: hooks.caBundle,
			}, nil),
			mutatingHook("v1beta1.kapi.test", cc("/label"), func(w *arv1.MutatingWebhook) { w.AdmissionReviewVersions = []string{"v1beta1"} }),
			mutatingHook("conditions.kapi.test", cc("/label"), func(w *arv1.MutatingWebhook) {
				w.ObjectSelector = nil
				w.MatchConditions = []arv1.MatchCondition{{Name: "only-cel", Expression: `has(object.metadata.labels) && object.metadata.labels["test"] == "cel" && request.operation == "CREATE"`}}
			}),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create mutating configuration: %v", err)
	}
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &arv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "validators"},
		Webhooks: []arv1.ValidatingWebhook{
			validatingHook("deny.kapi.test", cc("/deny"), nil),
			validatingHook("warn.kapi.test", cc("/warn"), nil),
			validatingHook("unknown-side-effects.kapi.test", cc("/warn"), func(w *arv1.ValidatingWebhook) {
				w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"test": "side-effects.kapi.test"}}
			}),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create validating configuration: %v", err)
	}

	cms := cs.CoreV1().ConfigMaps("default")
	// Mutation visible in the stored object.
	var got *corev1.ConfigMap
	eventually(t, "mutating webhook in effect", func() bool {
		got, err = cms.Create(ctx, cm("m1", "label.kapi.test"), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if got.Labels["label"] == "" {
			_ = cms.Delete(ctx, "m1", metav1.DeleteOptions{})
			return false
		}
		return true
	})
	stored, err := cms.Get(ctx, "m1", metav1.GetOptions{})
	if err != nil || stored.Labels["label"] != "1" {
		t.Errorf("stored labels %v (%v), want label=1 added by the webhook", stored.Labels, err)
	}

	// Denial: upstream's message, the webhook's code.
	eventually(t, "validating webhook in effect", func() bool {
		_, err = cms.Create(ctx, cm("d1", "deny.kapi.test"), metav1.CreateOptions{})
		return err != nil
	})
	if want := `admission webhook "deny.kapi.test" denied the request: configmaps named d1 are not welcome`; !strings.Contains(err.Error(), want) || !apierrors.IsForbidden(err) {
		t.Errorf("denial: %v, want 403 %q", err, want)
	}

	// Failure policies: down, slow, garbage.
	for _, tc := range []struct {
		hook    string
		wantErr string
	}{
		{"down-ignore.kapi.test", ""},
		{"down-fail.kapi.test", `Internal error occurred: failed calling webhook "down-fail.kapi.test": failed to call webhook: Post "https://127.0.0.1:1/down?timeout=10s"`},
		{"slow-ignore.kapi.test", ""},
		{"slow-fail.kapi.test", `failed calling webhook "slow-fail.kapi.test": failed to call webhook: Post`},
		{"garbage-ignore.kapi.test", ""},
		{"garbage-fail.kapi.test", `failed calling webhook "garbage-fail.kapi.test": received invalid webhook response: invalid character`},
	} {
		_, err := cms.Create(ctx, cm(strings.TrimSuffix(tc.hook, ".kapi.test"), tc.hook), metav1.CreateOptions{})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v, want admitted", tc.hook, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !apierrors.IsInternalError(err)):
			t.Errorf("%s: %v, want 500 with %q", tc.hook, err, tc.wantErr)
		}
	}

	// Dry run: a NoneOnDryRun webhook is called (webhooks with other side
	// effects cannot be stored through v1 validation; their refusal is
	// TestDispatcherDryRunRefused's).
	before := hooks.count("/sideeffects")
	if _, err := cms.Create(ctx, cm("dry", "side-effects.kapi.test"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("dry-run create with NoneOnDryRun webhook: %v", err)
	}
	if hooks.count("/sideeffects") != before+1 {
		t.Errorf("NoneOnDryRun webhook not called on dry run")
	}

	// Warnings and reinvocation.
	var warnings []string
	wcfg := rest.CopyConfig(s.Config)
	wcfg.WarningHandler = warningFunc(func(w string) { warnings = append(warnings, w) })
	wcs := kubernetes.NewForConfigOrDie(wcfg)
	if _, err := wcs.CoreV1().ConfigMaps("default").Create(ctx, cm("w1", "warn.kapi.test"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || warnings[0] != "careful with w1" {
		t.Errorf("warnings %q, want the webhook's", warnings)
	}
	re, err := cms.Create(ctx, cm("r1", "reinvoke"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// reinvoke.kapi.test saw 1 label (test) first; reinvoke-2 then added
	// label2; reinvoked, reinvoke.kapi.test saw 3 labels.
	if re.Labels["label"] != "3" || re.Labels["label2"] != "2" {
		t.Errorf("labels %v, want label=3 (reinvoked after label2) and label2=2", re.Labels)
	}

	// Service of type ExternalName pointing at localhost.
	sv, err := cms.Create(ctx, cm("svc1", "service.kapi.test"), metav1.CreateOptions{})
	if err != nil || sv.Labels["label"] != "1" {
		t.Errorf("service webhook: %v %v", sv, err)
	}
	// v1beta1 reviews when the webhook asks for them only.
	if _, err := cms.Create(ctx, cm("b1", "v1beta1.kapi.test"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hooks.mu.Lock()
	v := hooks.versions["/label"]
	hooks.mu.Unlock()
	if v != "admission.k8s.io/v1beta1" {
		t.Errorf("review version %q, want admission.k8s.io/v1beta1", v)
	}
	// matchConditions in CEL.
	c1, err := cms.Create(ctx, cm("c1", "cel"), metav1.CreateOptions{})
	if err != nil || c1.Labels["label"] != "1" {
		t.Errorf("matchConditions matching: %v %v", c1, err)
	}
	c2, err := cms.Create(ctx, cm("c2", "not-cel"), metav1.CreateOptions{})
	if err != nil || c2.Labels["label"] != "" {
		t.Errorf("matchConditions not matching: %v %v", c2, err)
	}

	// Metrics, with upstream's names and labels.
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`apiserver_admission_webhook_admission_duration_seconds_count{name="label.kapi.test",operation="CREATE",rejected="false",type="admit"}`,
		`apiserver_admission_webhook_fail_open_count{name="down-ignore.kapi.test",type="admit"} 1`,
		`apiserver_admission_webhook_rejection_count{error_type="no_error",name="deny.kapi.test",operation="CREATE",rejection_code="403",type="validating"}`,
		`apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error",name="down-fail.kapi.test",operation="CREATE",rejection_code="0",type="admit"} 1`,
		`apiserver_admission_webhook_request_total{code="200",name="warn.kapi.test",operation="CREATE",rejected="false",type="validating"}`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Audit annotations: the webhook's, prefixed with its name, and the
	// mutation record of each mutating webhook call.
	eventually(t, "audit annotations", func() bool {
		b, _ := os.ReadFile(auditLog)
		return strings.Contains(string(b), `"warn.kapi.test/seen":"yes"`) &&
			strings.Contains(string(b), `"mutation.webhook.admission.k8s.io/round_0_index_0":"{\"configuration\":\"mutators\",\"mutated\":true,\"webhook\":\"label.kapi.test\"}"`)
	})
}

func TestDryRunRefusedBySideEffects(t *testing.T) {
	hooks := startHooks(t)
	s := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &arv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "v"},
		Webhooks:   []arv1.ValidatingWebhook{validatingHook("some.kapi.test", arv1.WebhookClientConfig{URL: hooks.url("/count"), CABundle: hooks.caBundle}, nil)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Only a webhook stored before v1 could say Some; validation refuses
	// it now (upstream's message).
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &arv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Webhooks: []arv1.ValidatingWebhook{validatingHook("some.kapi.test", arv1.WebhookClientConfig{URL: hooks.url("/count")}, func(w *arv1.ValidatingWebhook) {
			w.SideEffects = ptr.To(arv1.SideEffectClassSome)
		})},
	}, metav1.CreateOptions{})
	if want := `webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("sideEffects Some: %v, want %q", err, want)
	}
	cms := cs.CoreV1().ConfigMaps("default")
	attempt := 0
	eventually(t, "webhook in effect", func() bool {
		attempt++
		_, err := cms.Create(ctx, cm("x"+strconv.Itoa(attempt), "some.kapi.test"), metav1.CreateOptions{})
		return err == nil && hooks.count("/count") > 0
	})
	n := hooks.count("/count")
	if _, err := cms.Create(ctx, cm("dry", "some.kapi.test"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("dry run with a None webhook: %v", err)
	}
	if hooks.count("/count") != n+1 {
		t.Errorf("a None webhook is called on dry run")
	}
}

type warningFunc func(string)

func (f warningFunc) HandleWarningHeader(_ int, _ string, text string) { f(text) }

func mustPort(t *testing.T, u string) int {
	_, p, err := net.SplitHostPort(strings.TrimPrefix(u, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}
