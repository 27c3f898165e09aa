package controllerruntime

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

var widgetGVK = schema.GroupVersionKind{Group: "cr.example.com", Version: "v1", Kind: "Widget"}

const finalizer = "cr.example.com/cleanup"

func TestManagerReconcilesCustomResources(t *testing.T) {
	for _, backend := range []struct {
		name string
		opts []kapitest.Option
	}{
		{"memory", nil},
		{"etcd", []kapitest.Option{kapitest.WithEmbeddedEtcd()}},
	} {
		t.Run(backend.name, func(t *testing.T) {
			srv := kapitest.Start(t, backend.opts...)
			installWidgetCRD(t, srv.Config)
			runManagerScenario(t, srv.Config, "widget-"+backend.name)
		})
	}
}

func installWidgetCRD(t *testing.T, cfg *rest.Config) {
	t.Helper()
	ctx := context.Background()
	cs := apiextensionsclient.NewForConfigOrDie(cfg)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.cr.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cr.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size": {Type: "integer", Minimum: ptr(1.0)},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"observedGeneration": {Type: "integer"},
							"phase":              {Type: "string"},
						}},
					},
				}},
			}},
		},
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD not established: %v", err)
	}
}

// widgetReconciler keeps, for every Widget, a finalizer, a ConfigMap it
// owns holding spec.size, and status {observedGeneration, phase: Ready}.
// On deletion it deletes the ConfigMap and removes its finalizer.
type widgetReconciler struct {
	client.Client
}

func newWidget() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	return u
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := newWidget()
	if err := r.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cmKey := types.NamespacedName{Namespace: w.GetNamespace(), Name: w.GetName() + "-config"}
	if w.GetDeletionTimestamp() != nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cmKey.Namespace, Name: cmKey.Name}}
		if err := r.Delete(ctx, cm); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if controllerutil.RemoveFinalizer(w, finalizer) {
			return ctrl.Result{}, r.Update(ctx, w)
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(w, finalizer) {
		if err := r.Update(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
	}
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cmKey.Namespace, Name: cmKey.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"size": fmt.Sprint(size)}
		return controllerutil.SetControllerReference(w, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	observed, _, _ := unstructured.NestedInt64(w.Object, "status", "observedGeneration")
	if observed != w.GetGeneration() {
		patch := client.MergeFrom(w.DeepCopy())
		if err := unstructured.SetNestedField(w.Object, w.GetGeneration(), "status", "observedGeneration"); err != nil {
			return ctrl.Result{}, err
		}
		if err := unstructured.SetNestedField(w.Object, "Ready", "status", "phase"); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Status().Patch(ctx, w, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

func runManagerScenario(t *testing.T, cfg *rest.Config, name string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		LeaderElection:          true,
		LeaderElectionID:        name,
		LeaderElectionNamespace: "default",
		LeaseDuration:           durationPtr(4 * time.Second),
		RenewDeadline:           durationPtr(3 * time.Second),
		RetryPeriod:             durationPtr(200 * time.Millisecond),
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named(name).
		// Controller names are process-wide: a second run of the test
		// (-count) would collide with the first.
		WithOptions(controller.Options{SkipNameValidation: ptr(true)}).
		For(newWidget()).
		Owns(&corev1.ConfigMap{}).
		Complete(&widgetReconciler{Client: mgr.GetClient()})
	if err != nil {
		t.Fatalf("build controller: %v", err)
	}
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-mgrDone; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	select {
	case <-mgr.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("manager was not elected leader within 30s")
	}

	// A direct client (no cache) observes what the reconciler does.
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	lease := &metav1.PartialObjectMetadata{}
	lease.SetGroupVersionKind(schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"})
	if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, lease); err != nil {
		t.Errorf("leader election lease: %v", err)
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
	key := client.ObjectKeyFromObject(w)

	waitFor(t, "finalizer, ConfigMap and status for generation 1", func() error {
		return checkReconciled(ctx, c, key, 1, "3")
	})

	// A spec change bumps the generation; the reconciler follows.
	got := newWidget()
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(got.Object, int64(5), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(ctx, got); err != nil {
		t.Fatalf("update widget: %v", err)
	}
	waitFor(t, "status for generation 2 and ConfigMap size 5", func() error {
		return checkReconciled(ctx, c, key, 2, "5")
	})

	// Someone deletes the owned ConfigMap: the Owns watch brings it back.
	if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w1-config"}}); err != nil {
		t.Fatalf("delete configmap: %v", err)
	}
	waitFor(t, "ConfigMap recreated", func() error {
		return checkReconciled(ctx, c, key, 2, "5")
	})

	// Deletion: the finalizer holds the widget until the reconciler has
	// cleaned up, then it is gone.
	if err := c.Delete(ctx, got); err != nil {
		t.Fatalf("delete widget: %v", err)
	}
	waitFor(t, "widget and its ConfigMap gone", func() error {
		if err := c.Get(ctx, key, newWidget()); !apierrors.IsNotFound(err) {
			return fmt.Errorf("widget: got %v, want NotFound", err)
		}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "w1-config"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("configmap: got %v, want NotFound", err)
		}
		return nil
	})
}

func checkReconciled(ctx context.Context, c client.Client, key types.NamespacedName, generation int64, size string) error {
	w := newWidget()
	if err := c.Get(ctx, key, w); err != nil {
		return err
	}
	if !controllerutil.ContainsFinalizer(w, finalizer) {
		return fmt.Errorf("finalizers %v, want %s", w.GetFinalizers(), finalizer)
	}
	if w.GetGeneration() != generation {
		return fmt.Errorf("generation %d, want %d", w.GetGeneration(), generation)
	}
	observed, _, _ := unstructured.NestedInt64(w.Object, "status", "observedGeneration")
	phase, _, _ := unstructured.NestedString(w.Object, "status", "phase")
	if observed != generation || phase != "Ready" {
		return fmt.Errorf("status observedGeneration=%d phase=%q, want %d Ready", observed, phase, generation)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: key.Name + "-config"}, cm); err != nil {
		return fmt.Errorf("configmap: %w", err)
	}
	if cm.Data["size"] != size {
		return fmt.Errorf("configmap size %q, want %q", cm.Data["size"], size)
	}
	owner := metav1.GetControllerOf(cm)
	if owner == nil || owner.UID != w.GetUID() || owner.Kind != "Widget" {
		return fmt.Errorf("configmap controller %+v, want the widget %s", owner, w.GetUID())
	}
	return nil
}

func waitFor(t *testing.T, what string, check func() error) {
	t.Helper()
	testwait.For(t, 30*time.Second, 50*time.Millisecond, what, check)
}

func ptr[T any](v T) *T { return &v }

func durationPtr(d time.Duration) *time.Duration { return &d }
