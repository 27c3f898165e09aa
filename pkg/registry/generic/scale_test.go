package generic

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// deploymentScale is the typed accessor a deployments store would use.
type deploymentScale struct{}

func (deploymentScale) Replicas(obj runtime.Object) (int32, int32, string, error) {
	d := obj.(*appsv1.Deployment)
	spec := int32(1)
	if d.Spec.Replicas != nil {
		spec = *d.Spec.Replicas
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return 0, 0, "", err
	}
	return spec, d.Status.Replicas, sel.String(), nil
}

func (deploymentScale) SetReplicas(obj runtime.Object, n int32) error {
	obj.(*appsv1.Deployment).Spec.Replicas = &n
	return nil
}

// scaleTo is an UpdatedObjectInfo that sets spec.replicas of a Scale, with
// an optional resourceVersion.
type scaleTo struct {
	replicas int32
	rv       string
}

func (s scaleTo) Preconditions() *metav1.Preconditions { return nil }
func (s scaleTo) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	sc := old.(*autoscalingv1.Scale).DeepCopy()
	sc.Spec.Replicas = s.replicas
	if s.rv != "" {
		sc.ResourceVersion = s.rv
	}
	return sc, nil
}

func TestScaleREST(t *testing.T) {
	store := newDeploymentStore(t, newBackend(t))
	ctx := request.WithNamespace(context.Background(), "ns")
	two := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &two,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	created := mustCreate(t, store, ctx, d)
	scale := NewScaleREST(store, deploymentScale{})

	got, err := scale.Get(ctx, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc := got.(*autoscalingv1.Scale)
	if sc.Spec.Replicas != 2 || sc.Status.Selector != "app=web" || sc.ResourceVersion != created.ResourceVersion || sc.UID != created.UID {
		t.Fatalf("got scale %+v", sc)
	}

	out, _, err := scale.Update(ctx, "web", scaleTo{replicas: 5}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.(*autoscalingv1.Scale).Spec.Replicas != 5 {
		t.Fatalf("scale after update: %+v", out)
	}
	obj, _ := store.Get(ctx, "web", &metav1.GetOptions{})
	if got := *obj.(*appsv1.Deployment).Spec.Replicas; got != 5 {
		t.Fatalf("deployment replicas %d, want 5", got)
	}
	if obj.(*appsv1.Deployment).Generation != 2 {
		t.Fatalf("generation %d, want 2 (spec changed)", obj.(*appsv1.Deployment).Generation)
	}

	_, _, err = scale.Update(ctx, "web", scaleTo{replicas: -1}, nil, nil, false, &metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("negative replicas: got %v, want 422 Invalid", err)
	}
	_, _, err = scale.Update(ctx, "web", scaleTo{replicas: 3, rv: created.ResourceVersion}, nil, nil, false, &metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale scale resourceVersion: got %v, want 409 Conflict", err)
	}
	if _, err := scale.Get(ctx, "nope", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("missing object: got %v, want 404", err)
	}
}

func TestPathScaleAccessor(t *testing.T) {
	a := PathScaleAccessor{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".status.selector"}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"replicas": int64(3)},
		"status": map[string]any{"replicas": int64(1), "selector": "app=x"},
	}}
	spec, status, sel, err := a.Replicas(u)
	if err != nil || spec != 3 || status != 1 || sel != "app=x" {
		t.Fatalf("got %d %d %q %v", spec, status, sel, err)
	}
	if err := a.SetReplicas(u, 7); err != nil {
		t.Fatal(err)
	}
	if spec, _, _, _ := a.Replicas(u); spec != 7 {
		t.Fatalf("after SetReplicas: %d", spec)
	}
	// Missing status reads as zero, as upstream.
	empty := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	if spec, status, sel, err := a.Replicas(empty); err != nil || spec != 0 || status != 0 || sel != "" {
		t.Fatalf("empty: %d %d %q %v", spec, status, sel, err)
	}
	if _, _, _, err := (PathScaleAccessor{SpecReplicasPath: "spec.replicas"}).Replicas(u); err == nil {
		t.Fatal("a path without a leading dot must be an error")
	}
}
