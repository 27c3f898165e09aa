package replicaset

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func newReplicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	scheme.Scheme.Default(rs)
	return rs
}

func TestReplicaSetStore(t *testing.T) {
	store, status, scale, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("apps", "v1", "replicasets", "default")
	if got := store.ShortNames(); !slices.Equal(got, []string{"rs"}) {
		t.Errorf("got short names %v, want [rs]", got)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := store.Create(ctx, newReplicaSet(name, 2), nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Only /status sets status.replicas, which is a field selector.
	obj, err := store.Get(ctx, "b", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := obj.(*appsv1.ReplicaSet)
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 1}
	rs.Spec.Replicas = ptr(int32(7))
	obj, _, err = status.Update(ctx, "b", registrytest.Updated{Obj: rs}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*appsv1.ReplicaSet); got.Status.Replicas != 2 || *got.Spec.Replicas != 2 || got.Generation != 1 {
		t.Errorf("after /status got %+v, want status set, spec and generation kept", got)
	}
	list, err := store.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.replicas", "2")})
	if err != nil {
		t.Fatal(err)
	}
	if items := list.(*appsv1.ReplicaSetList).Items; len(items) != 1 || items[0].Name != "b" {
		t.Errorf("got %d items for status.replicas=2, want only b", len(items))
	}

	if _, err := scale.Get(ctx, "a", &metav1.GetOptions{}); err != nil {
		t.Errorf("get scale: %v", err)
	}
}

func TestReplicaSetTable(t *testing.T) {
	rs := newReplicaSet("web", 3)
	rs.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Minute))
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), rs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name+":"+c.Type)
	}
	// upstream's printers.go (v1.37)
	if want := []string{"Name:string", "Desired:integer", "Current:integer", "Ready:integer", "Age:string", "Containers:string", "Images:string", "Selector:string"}; !slices.Equal(cols, want) {
		t.Errorf("got columns %v, want %v", cols, want)
	}
	if got, want := tbl.Rows[0].Cells, []any{"web", int64(3), int64(2), int64(1), "2m", "c", "nginx", "app=web"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }
