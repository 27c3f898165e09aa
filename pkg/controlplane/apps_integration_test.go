package controlplane_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestAppsThroughServer serves apps/v1 from a full server, on the memory
// backend and on embedded etcd, and checks discovery, upstream's defaults
// on every write path (create, update, each patch type, server-side apply)
// and the generation rules.
func TestAppsThroughServer(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testAppsThroughServer(t) })
	t.Run("etcd", func(t *testing.T) { testAppsThroughServer(t, kapitest.WithEmbeddedEtcd()) })
}

func testAppsThroughServer(t *testing.T, opts ...kapitest.Option) {
	srv := kapitest.Start(t, opts...)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("discovery", func(t *testing.T) { testAppsDiscovery(t, cs) })
	t.Run("defaults on every write path", func(t *testing.T) { testAppsDefaultsOnWrites(t, cs) })
	t.Run("generation", func(t *testing.T) { testAppsGeneration(t, cs) })
	t.Run("protobuf, watch, field selector", func(t *testing.T) { testAppsProtobufWatch(t, srv) })
}

// testAppsProtobufWatch reads and watches apps/v1 objects, their scale
// and replicasets by status.replicas, over protobuf.
func testAppsProtobufWatch(t *testing.T, srv *kapitest.Server) {
	cfg := rest.CopyConfig(srv.Config)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	sets := cs.AppsV1().StatefulSets("default")
	w, err := sets.Watch(ctx, metav1.ListOptions{LabelSelector: "watched=yes"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ss := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "pb", Labels: map[string]string{"watched": "yes"}},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pb"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "pb"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "redis:7"}}},
			},
		},
	}
	if _, err := sets.Create(ctx, ss, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sets.UpdateScale(ctx, "pb", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "pb"}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		typ      watch.EventType
		replicas int32
	}{{watch.Added, 1}, {watch.Modified, 3}} {
		select {
		case ev := <-w.ResultChan():
			got, ok := ev.Object.(*appsv1.StatefulSet)
			if !ok || ev.Type != want.typ || *got.Spec.Replicas != want.replicas {
				t.Fatalf("got event %s %T, want %s with %d replicas", ev.Type, ev.Object, want.typ, want.replicas)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s event", want.typ)
		}
	}
	scale, err := sets.GetScale(ctx, "pb", metav1.GetOptions{})
	if err != nil || scale.Spec.Replicas != 3 || scale.Status.Selector != "app=pb" {
		t.Errorf("got scale %+v, %v; want 3 replicas, selector app=pb", scale, err)
	}

	rss := cs.AppsV1().ReplicaSets("default")
	for _, name := range []string{"zero", "two"} {
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.ReplicaSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"rs": name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"rs": name}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
				},
			},
		}
		created, err := rss.Create(ctx, rs, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if name == "two" {
			created.Status = appsv1.ReplicaSetStatus{Replicas: 2}
			if _, err := rss.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// apps/v1 ReplicaSets are selectable by metadata only: upstream
	// registers no field label conversion for them, and kube-apiserver
	// v1.37.2 answers this 400.
	if _, err := rss.List(ctx, metav1.ListOptions{FieldSelector: "status.replicas=2"}); !apierrors.IsBadRequest(err) ||
		err.Error() != `"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("got %v for status.replicas, want upstream's 400", err)
	}
	list, err := rss.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=two"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "two" {
		t.Errorf("got %d replicasets with metadata.name=two, want only two", len(list.Items))
	}
}

func testAppsDiscovery(t *testing.T, cs kubernetes.Interface) {
	list, err := cs.Discovery().ServerResourcesForGroupVersion("apps/v1")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]metav1.APIResource{}
	for _, r := range list.APIResources {
		got[r.Name] = r
	}
	// Expected values: kube-apiserver v1.37's /apis/apps/v1 (short names and
	// categories from pkg/registry/apps/*/storage/storage.go).
	for _, want := range []struct {
		name, kind string
		short      []string
		categories []string
	}{
		{"deployments", "Deployment", []string{"deploy"}, []string{"all"}},
		{"replicasets", "ReplicaSet", []string{"rs"}, []string{"all"}},
		{"statefulsets", "StatefulSet", []string{"sts"}, []string{"all"}},
		{"daemonsets", "DaemonSet", []string{"ds"}, []string{"all"}},
		{"controllerrevisions", "ControllerRevision", nil, nil},
	} {
		r, ok := got[want.name]
		if !ok {
			t.Errorf("apps/v1 lacks %s", want.name)
			continue
		}
		if r.Kind != want.kind || !r.Namespaced || !slices.Equal(r.ShortNames, want.short) || !slices.Equal(r.Categories, want.categories) {
			t.Errorf("got %s %+v, want kind %s, namespaced, short names %v, categories %v", want.name, r, want.kind, want.short, want.categories)
		}
		if !slices.Contains(r.Verbs, "deletecollection") || !slices.Contains(r.Verbs, "watch") || !slices.Contains(r.Verbs, "patch") {
			t.Errorf("%s: got verbs %v, want every verb", want.name, r.Verbs)
		}
	}
	for _, sub := range []string{"deployments/status", "deployments/scale", "replicasets/status", "replicasets/scale",
		"statefulsets/status", "statefulsets/scale", "daemonsets/status"} {
		r, ok := got[sub]
		if !ok {
			t.Errorf("apps/v1 lacks %s", sub)
			continue
		}
		wantKind := map[bool]string{true: "Scale", false: got[sub[:len(sub)-len("/status")]].Kind}[sub[len(sub)-5:] == "scale"]
		if r.Kind != wantKind {
			t.Errorf("%s: got kind %s, want %s", sub, r.Kind, wantKind)
		}
		if wantKind == "Scale" && (r.Group != "autoscaling" || r.Version != "v1") {
			t.Errorf("%s: got %s/%s, want autoscaling/v1", sub, r.Group, r.Version)
		}
	}
	if _, ok := got["daemonsets/scale"]; ok {
		t.Error("got daemonsets/scale, want none (upstream has none)")
	}
}

// bareDeployment has none of the fields upstream defaults (but a template
// restartPolicy, which the pod defaults would set).
func bareDeployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyAlways,
					Containers:    []corev1.Container{{Name: "c", Image: "nginx:1.25"}},
				},
			},
		},
	}
}

// checkDeploymentDefaults fails unless d carries upstream's
// SetDefaults_Deployment values (pkg/apis/apps/v1/defaults.go, v1.37)
// and generation wantGen.
func checkDeploymentDefaults(t *testing.T, how string, d *appsv1.Deployment, replicas int32, wantGen int64) {
	t.Helper()
	s := d.Spec
	quarter := intstr.FromString("25%")
	switch {
	case s.Replicas == nil || *s.Replicas != replicas:
		t.Errorf("%s: got replicas %v, want %d", how, s.Replicas, replicas)
	case s.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || s.Strategy.RollingUpdate == nil ||
		s.Strategy.RollingUpdate.MaxSurge == nil || *s.Strategy.RollingUpdate.MaxSurge != quarter ||
		s.Strategy.RollingUpdate.MaxUnavailable == nil || *s.Strategy.RollingUpdate.MaxUnavailable != quarter:
		t.Errorf("%s: got strategy %+v, want RollingUpdate 25%%/25%%", how, s.Strategy)
	case s.RevisionHistoryLimit == nil || *s.RevisionHistoryLimit != 10:
		t.Errorf("%s: got revisionHistoryLimit %v, want 10", how, s.RevisionHistoryLimit)
	case s.ProgressDeadlineSeconds == nil || *s.ProgressDeadlineSeconds != 600:
		t.Errorf("%s: got progressDeadlineSeconds %v, want 600", how, s.ProgressDeadlineSeconds)
	case d.Generation != wantGen:
		t.Errorf("%s: got generation %d, want %d", how, d.Generation, wantGen)
	}
}

func testAppsDefaultsOnWrites(t *testing.T, cs kubernetes.Interface) {
	ctx := t.Context()
	ns := "default"
	deps := cs.AppsV1().Deployments(ns)

	created, err := deps.Create(ctx, bareDeployment("paths"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkDeploymentDefaults(t, "create", created, 1, 1)

	// Each write clears defaulted fields; the server defaults them again,
	// so the spec does not change and the generation stays 1 (a server
	// that did not default would store nil fields and bump it).
	put := created.DeepCopy()
	put.Spec.RevisionHistoryLimit, put.Spec.ProgressDeadlineSeconds, put.Spec.Strategy = nil, nil, appsv1.DeploymentStrategy{}
	updated, err := deps.Update(ctx, put, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkDeploymentDefaults(t, "update", updated, 1, 1)

	for _, p := range []struct {
		name  string
		typ   types.PatchType
		patch string
	}{
		{"json patch", types.JSONPatchType, `[{"op":"remove","path":"/spec/revisionHistoryLimit"},{"op":"remove","path":"/spec/strategy"}]`},
		{"merge patch", types.MergePatchType, `{"spec":{"progressDeadlineSeconds":null,"replicas":null}}`},
		{"strategic merge patch", types.StrategicMergePatchType, `{"spec":{"revisionHistoryLimit":null,"strategy":{"rollingUpdate":null}}}`},
	} {
		got, err := deps.Patch(ctx, "paths", p.typ, []byte(p.patch), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		checkDeploymentDefaults(t, p.name, got, 1, 1)
	}

	// Server-side apply: creating and updating from a manifest without the
	// defaulted fields.
	applied := bareDeployment("applied")
	applied.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	body, err := json.Marshal(applied)
	if err != nil {
		t.Fatal(err)
	}
	got, err := deps.Patch(ctx, "applied", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "test"})
	if err != nil {
		t.Fatalf("apply (create): %v", err)
	}
	checkDeploymentDefaults(t, "apply (create)", got, 1, 1)
	applied.Spec.Replicas = ptr(int32(3))
	body, _ = json.Marshal(applied)
	got, err = deps.Patch(ctx, "applied", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "test"})
	if err != nil {
		t.Fatalf("apply (update): %v", err)
	}
	checkDeploymentDefaults(t, "apply (update)", got, 3, 2)

	// What is stored is defaulted: a read returns the same.
	read, err := deps.Get(ctx, "paths", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkDeploymentDefaults(t, "get", read, 1, 1)
}

func testAppsGeneration(t *testing.T, cs kubernetes.Interface) {
	ctx := t.Context()
	deps := cs.AppsV1().Deployments("default")
	d, err := deps.Create(ctx, bareDeployment("gen"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	step := func(what string, wantGen int64, do func(context.Context) (*appsv1.Deployment, error)) *appsv1.Deployment {
		t.Helper()
		got, err := do(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got.Generation != wantGen {
			t.Errorf("%s: got generation %d, want %d", what, got.Generation, wantGen)
		}
		return got
	}
	patch := func(p string) func(context.Context) (*appsv1.Deployment, error) {
		return func(ctx context.Context) (*appsv1.Deployment, error) {
			return deps.Patch(ctx, "gen", types.MergePatchType, []byte(p), metav1.PatchOptions{})
		}
	}
	// Upstream's deployment strategy: spec or annotation changes bump the
	// generation; label changes and status writes do not.
	step("label", 1, patch(`{"metadata":{"labels":{"a":"b"}}}`))
	step("annotation", 2, patch(`{"metadata":{"annotations":{"a":"b"}}}`))
	step("spec", 3, patch(`{"spec":{"minReadySeconds":5}}`))
	d = step("status through the main resource is ignored", 3, patch(`{"status":{"replicas":7}}`))
	if d.Status.Replicas != 0 {
		t.Errorf("got status.replicas %d after a write to the main resource, want 0", d.Status.Replicas)
	}
	d.Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 1, ObservedGeneration: 3}
	d.Spec.MinReadySeconds = 9
	d.Labels = map[string]string{"changed": "through status"}
	d = step("status", 3, func(ctx context.Context) (*appsv1.Deployment, error) {
		return deps.UpdateStatus(ctx, d, metav1.UpdateOptions{})
	})
	if d.Status.Replicas != 2 || d.Spec.MinReadySeconds != 5 || d.Labels["a"] != "b" || d.Labels["changed"] != "" {
		t.Errorf("after /status: got status.replicas %d, minReadySeconds %d, labels %v; want 2, 5 (spec kept), labels kept",
			d.Status.Replicas, d.Spec.MinReadySeconds, d.Labels)
	}
	scale, err := deps.GetScale(ctx, "gen", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if scale.Spec.Replicas != 1 || scale.Status.Replicas != 2 || scale.Status.Selector != "app=gen" {
		t.Errorf("got scale %+v, want spec 1, status 2, selector app=gen", scale)
	}
	scale.Spec.Replicas = 4
	if _, err := deps.UpdateScale(ctx, "gen", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d = step("get", 4, func(ctx context.Context) (*appsv1.Deployment, error) {
		return deps.Get(ctx, "gen", metav1.GetOptions{})
	})
	if *d.Spec.Replicas != 4 {
		t.Errorf("got replicas %d after scaling to 4", *d.Spec.Replicas)
	}
}

func ptr[T any](v T) *T { return &v }
