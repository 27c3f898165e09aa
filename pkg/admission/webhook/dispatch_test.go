package webhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/configsource"
	"github.com/kapi-dev/kapi/pkg/admission/configsource/configsourcetest"
)

func runSource(t *testing.T, list runtime.Object, compile func(runtime.Object) []*Hook) *configsource.Source[*Hook] {
	src := configsource.New(configsourcetest.Static{Objects: list}, compile, nil)
	configsourcetest.Run(t, src.Run)
	return src
}

// denyingServer denies every request with result (nil: none) and counts
// calls.
func denyingServer(t *testing.T, result *metav1.Status, calls *atomic.Int32) *httptest.Server {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var review admissionv1.AdmissionReview
		_ = json.NewDecoder(r.Body).Decode(&review)
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false, Result: result}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func validatingConfig(url string, ca []byte, mutate func(*arv1.ValidatingWebhook)) *arv1.ValidatingWebhookConfigurationList {
	w := arv1.ValidatingWebhook{
		Name: "v.kapi.test", ClientConfig: arv1.WebhookClientConfig{URL: &url, CABundle: ca},
		Rules: []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.OperationAll},
			Rule: arv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*/*"}}}},
		SideEffects: ptr.To(arv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
	}
	if mutate != nil {
		mutate(&w)
	}
	return &arv1.ValidatingWebhookConfigurationList{Items: []arv1.ValidatingWebhookConfiguration{{ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "u"}, Webhooks: []arv1.ValidatingWebhook{w}}}}
}

func configMapAttrs(ns string, dryRun bool) admission.Attributes {
	return admission.Attributes{
		Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: ns, Name: "x", DryRun: dryRun,
		Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}},
	}
}

func caOf(srv *httptest.Server) []byte {
	return pemCert(srv.Certificate().Raw)
}

// TestDispatcherDryRunRefused: webhooks whose sideEffects are Unknown or
// Some (v1beta1-era objects) are never sent dry-run requests: 400 with
// upstream's message (k8s.io/apiserver pkg/admission/plugin/webhook/errors
// NewDryRunUnsupportedErr, v1.37).
func TestDispatcherDryRunRefused(t *testing.T) {
	var calls atomic.Int32
	srv := denyingServer(t, nil, &calls)
	for _, se := range []arv1.SideEffectClass{arv1.SideEffectClassUnknown, arv1.SideEffectClassSome} {
		src := runSource(t, validatingConfig(srv.URL, caOf(srv), func(w *arv1.ValidatingWebhook) { w.SideEffects = ptr.To(se) }), CompileValidating)
		d := NewDispatcher(src, Options{})
		err := d.Validate(context.Background(), configMapAttrs("", true))
		if want := `admission webhook "v.kapi.test" does not support dry run`; err == nil || err.Error() != want || !apierrors.IsBadRequest(err) {
			t.Errorf("%s: %v, want 400 %q", se, err, want)
		}
	}
	if calls.Load() != 0 {
		t.Errorf("webhook called %d times on dry run", calls.Load())
	}
}

// TestDispatcherDenial: upstream's ToStatusErr wording and codes
// (k8s.io/apiserver pkg/admission/plugin/webhook/errors/statuserror.go).
func TestDispatcherDenial(t *testing.T) {
	for _, tc := range []struct {
		result   *metav1.Status
		wantMsg  string
		wantCode int32
	}{
		{nil, `admission webhook "v.kapi.test" denied the request without explanation`, 400},
		{&metav1.Status{Reason: "NotToday", Code: 200}, `admission webhook "v.kapi.test" denied the request: NotToday`, 400},
		{&metav1.Status{Message: "no", Code: 422}, `admission webhook "v.kapi.test" denied the request: no`, 422},
	} {
		var calls atomic.Int32
		srv := denyingServer(t, tc.result, &calls)
		d := NewDispatcher(runSource(t, validatingConfig(srv.URL, caOf(srv), nil), CompileValidating), Options{})
		err := d.Validate(context.Background(), configMapAttrs("", false))
		var st apierrors.APIStatus
		if err == nil || !asStatus(err, &st) || st.Status().Message != tc.wantMsg || st.Status().Code != tc.wantCode {
			t.Errorf("%+v: %v, want %d %q", tc.result, err, tc.wantCode, tc.wantMsg)
		}
	}
}

// TestDispatcherNamespaceSelector: the namespace's labels decide; a
// missing namespace is a 404.
func TestDispatcherNamespaceSelector(t *testing.T) {
	var calls atomic.Int32
	srv := denyingServer(t, &metav1.Status{Message: "no"}, &calls)
	src := runSource(t, validatingConfig(srv.URL, caOf(srv), func(w *arv1.ValidatingWebhook) {
		w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"guarded": "true"}}
	}), CompileValidating)
	labels := map[string]map[string]string{"guarded": {"guarded": "true"}, "open": {}}
	d := NewDispatcher(src, Options{NamespaceLabels: func(_ context.Context, name string) (map[string]string, error) {
		l, ok := labels[name]
		if !ok {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
		}
		return l, nil
	}})
	ctx := context.Background()
	if err := d.Validate(ctx, configMapAttrs("guarded", false)); err == nil || !strings.Contains(err.Error(), "denied the request: no") {
		t.Errorf("guarded namespace: %v", err)
	}
	if err := d.Validate(ctx, configMapAttrs("open", false)); err != nil {
		t.Errorf("open namespace: %v", err)
	}
	if err := d.Validate(ctx, configMapAttrs("missing", false)); !apierrors.IsNotFound(err) {
		t.Errorf("missing namespace: %v", err)
	}
	// A namespace is matched by its own labels.
	nsAttrs := admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
		Kind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, Name: "new",
		Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new", Labels: map[string]string{"guarded": "true"}}}}
	if err := d.Validate(ctx, nsAttrs); err == nil {
		t.Errorf("guarded namespace object admitted")
	}
	// Webhook configurations themselves are exempt.
	exemptAttrs := configMapAttrs("guarded", false)
	exemptAttrs.Resource = arv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
	if err := d.Validate(ctx, exemptAttrs); err != nil {
		t.Errorf("webhook configuration not exempt: %v", err)
	}
}

// TestResourceMatches: upstream's rules matcher
// (k8s.io/apiserver pkg/admission/plugin/webhook/predicates/rules).
func TestResourceMatches(t *testing.T) {
	for _, tc := range []struct {
		list          []string
		resource, sub string
		want          bool
	}{
		{[]string{"*"}, "pods", "", true},
		{[]string{"*"}, "pods", "status", false},
		{[]string{"*/*"}, "pods", "status", true},
		{[]string{"pods/*"}, "pods", "status", true},
		{[]string{"pods/*"}, "pods", "", true}, // "*" is any subresource, none included
		{[]string{"*/status"}, "deployments", "status", true},
		{[]string{"*/status"}, "deployments", "scale", false},
		{[]string{"pods"}, "pods", "exec", false},
		{[]string{"pods/exec"}, "pods", "exec", true},
		{[]string{"configmaps"}, "pods", "", false},
	} {
		if got := resourceMatches(tc.list, tc.resource, tc.sub); got != tc.want {
			t.Errorf("%v matches %s/%s = %v, want %v", tc.list, tc.resource, tc.sub, got, tc.want)
		}
	}
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func asStatus(err error, st *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*st = s
	return ok
}

// blockedConfigs never answers its list (configurations not synced).
type blockedConfigs struct{}

func (blockedConfigs) List(ctx context.Context, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blockedConfigs) Watch(context.Context, *metainternalversion.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// TestDispatcherNotReady: before the configurations are listed, a
// request waits up to configsource.ReadyTimeout, then is refused as
// upstream refuses it (403 "not yet ready to handle request").
func TestDispatcherNotReady(t *testing.T) {
	old := configsource.ReadyTimeout
	configsource.ReadyTimeout = 100 * time.Millisecond
	defer func() { configsource.ReadyTimeout = old }()
	src := configsource.New(blockedConfigs{}, CompileValidating, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); src.Run(ctx) }()
	defer func() { cancel(); <-done }()
	err := NewDispatcher(src, Options{}).Validate(context.Background(), configMapAttrs("ns", false))
	if want := `configmaps "x" is forbidden: not yet ready to handle request`; err == nil || err.Error() != want || !apierrors.IsForbidden(err) {
		t.Errorf("got %v, want 403 %q", err, want)
	}
}
