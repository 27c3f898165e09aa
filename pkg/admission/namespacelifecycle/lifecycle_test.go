package namespacelifecycle

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// namespaces is a NamespaceGetter over a fixed set.
type namespaces map[string]corev1.NamespacePhase

func (n namespaces) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	phase, ok := n[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}, nil
}

func TestValidate(t *testing.T) {
	p := New(namespaces{"live": corev1.NamespaceActive, "dying": corev1.NamespaceTerminating})
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	lsar := schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "localsubjectaccessreviews"}
	ns := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for _, tc := range []struct {
		name string
		a    admission.Attributes
		want func(error) bool
	}{
		{"create in a live namespace", admission.Attributes{Operation: admission.Create, Resource: cm, Namespace: "live"}, isNil},
		{"create in a missing namespace", admission.Attributes{Operation: admission.Create, Resource: cm, Namespace: "gone"}, apierrors.IsNotFound},
		{"create in a terminating namespace", admission.Attributes{Operation: admission.Create, Resource: cm, Namespace: "dying"}, apierrors.IsForbidden},
		{"access review in a missing namespace", admission.Attributes{Operation: admission.Create, Resource: lsar, Namespace: "gone"}, isNil},
		{"access review in a terminating namespace", admission.Attributes{Operation: admission.Create, Resource: lsar, Namespace: "dying"}, isNil},
		{"delete kube-system", admission.Attributes{Operation: admission.Delete, Resource: ns, Name: "kube-system"}, apierrors.IsForbidden},
		{"delete another namespace", admission.Attributes{Operation: admission.Delete, Resource: ns, Name: "live"}, isNil},
	} {
		if err := p.Validate(context.Background(), tc.a); !tc.want(err) {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}

func isNil(err error) bool { return err == nil }

// twoViews is a NamespaceGetter whose cache (resourceVersion "0") and
// storage disagree, counting the reads of each.
type twoViews struct {
	cache, storage namespaces
	cached, live   int
}

func (v *twoViews) Get(ctx context.Context, name string, o *metav1.GetOptions) (runtime.Object, error) {
	if o != nil && o.ResourceVersion == "0" {
		v.cached++
		return v.cache.Get(ctx, name, o)
	}
	v.live++
	return v.storage.Get(ctx, name, o)
}

// TestCacheThenStorage: as upstream's plugin, a namespace the cache has is
// taken from it (no storage read); one it lacks is looked up in storage
// (it may have just been created); and one deleted through the server in
// the last 30 s is looked up in storage while the cache still shows it
// active.
func TestCacheThenStorage(t *testing.T) {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nsr := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	create := func(ns string) admission.Attributes {
		return admission.Attributes{Operation: admission.Create, Resource: cm, Namespace: ns}
	}
	v := &twoViews{
		cache:   namespaces{"live": corev1.NamespaceActive, "old": corev1.NamespaceActive},
		storage: namespaces{"live": corev1.NamespaceActive, "new": corev1.NamespaceActive, "old": corev1.NamespaceTerminating},
	}
	now := time.Unix(1000, 0)
	p := New(v)
	p.Now = func() time.Time { return now }
	ctx := context.Background()

	if err := p.Validate(ctx, create("live")); err != nil || v.live != 0 {
		t.Errorf("namespace in the cache: err %v, %d storage reads, want nil and 0", err, v.live)
	}
	if err := p.Validate(ctx, create("new")); err != nil || v.live != 1 {
		t.Errorf("namespace not yet in the cache: err %v, %d storage reads, want nil and 1", err, v.live)
	}
	if err := p.Validate(ctx, create("gone")); !apierrors.IsNotFound(err) || v.live != 2 {
		t.Errorf("missing namespace: err %v, %d storage reads, want NotFound and 2", err, v.live)
	}
	// The cache still shows "old" active: without a deletion through this
	// server it is believed.
	if err := p.Validate(ctx, create("old")); err != nil || v.live != 2 {
		t.Errorf("stale cache, no deletion seen: err %v, %d storage reads, want nil and 2", err, v.live)
	}
	if err := p.Validate(ctx, admission.Attributes{Operation: admission.Delete, Resource: nsr, Name: "old"}); err != nil {
		t.Fatalf("delete namespace: %v", err)
	}
	if err := p.Validate(ctx, create("old")); !apierrors.IsForbidden(err) || v.live != 3 {
		t.Errorf("deleted through the server, cache stale: err %v, %d storage reads, want Forbidden and 3", err, v.live)
	}
	now = now.Add(forceLiveLookupTTL)
	if err := p.Validate(ctx, create("old")); err != nil || v.live != 3 {
		t.Errorf("after the live-lookup TTL: err %v, %d storage reads, want the cache's answer and 3", err, v.live)
	}
}
