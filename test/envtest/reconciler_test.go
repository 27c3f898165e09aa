package envtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.kapi.dev", Version: "v1", Kind: "Widget"}

func newWidget() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	return u
}

// widgetReconciler keeps, for every Widget, a ConfigMap it owns holding
// spec.size, and sets status.phase to Ready.
type widgetReconciler struct{ client.Client }

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := newWidget()
	if err := r.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.GetNamespace(), Name: w.GetName() + "-size"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"size": fmt.Sprint(size)}
		return controllerutil.SetControllerReference(w, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	if phase, _, _ := unstructured.NestedString(w.Object, "status", "phase"); phase != "Ready" {
		patch := client.MergeFrom(w.DeepCopy())
		if err := unstructured.SetNestedField(w.Object, "Ready", "status", "phase"); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Status().Patch(ctx, w, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// runReconcilerScenario runs a manager with the widget reconciler against
// cfg and checks that it reconciles a Widget: creates the ConfigMap,
// follows a spec change, sets the status.
func runReconcilerScenario(t *testing.T, cfg *rest.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	skip := true
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("widget").
		// Controller names are process-wide; several tests use this one.
		WithOptions(controller.Options{SkipNameValidation: &skip}).
		For(newWidget()).
		Owns(&corev1.ConfigMap{}).
		Complete(&widgetReconciler{Client: mgr.GetClient()}); err != nil {
		t.Fatalf("build controller: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	w := newWidget()
	w.SetNamespace("default")
	w.SetName("w1")
	if err := unstructured.SetNestedField(w.Object, int64(3), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, w); err != nil {
		t.Fatalf("create widget: %v", err)
	}
	waitForSize(ctx, t, c, "3")
	// The reconciler writes the status meanwhile: retry on conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(w.Object, int64(5), "spec", "size"); err != nil {
			return err
		}
		return c.Update(ctx, w)
	}); err != nil {
		t.Fatalf("update widget: %v", err)
	}
	waitForSize(ctx, t, c, "5")
	eventually(t, "status.phase Ready", func() (bool, error) {
		got := newWidget()
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
			return false, err
		}
		phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
		return phase == "Ready", nil
	})
	// A spec that the CRD's schema forbids is refused.
	bad := newWidget()
	bad.SetNamespace("default")
	bad.SetName("bad")
	_ = unstructured.SetNestedField(bad.Object, int64(0), "spec", "size")
	if err := c.Create(ctx, bad); !apierrors.IsInvalid(err) {
		t.Errorf("create a widget of size 0: got %v, want Invalid (minimum: 1)", err)
	}
}

func waitForSize(ctx context.Context, t *testing.T, c client.Client, want string) {
	t.Helper()
	eventually(t, "ConfigMap w1-size with size "+want, func() (bool, error) {
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "w1-size"}, cm)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Kind != "Widget" {
			return false, fmt.Errorf("ConfigMap owners %v, want the widget", cm.OwnerReferences)
		}
		return cm.Data["size"] == want, nil
	})
}

func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
