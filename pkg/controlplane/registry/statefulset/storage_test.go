package statefulset

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func newStatefulSet(name string) *appsv1.StatefulSet {
	ss := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "postgres:16"}}},
			},
		},
	}
	scheme.Scheme.Default(ss)
	return ss
}

func TestStatefulSetStore(t *testing.T) {
	store, _, scale, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	var warnings registrytest.Warnings
	ctx := warning.WithRecorder(registrytest.Context("apps", "v1", "statefulsets", "default"), &warnings)
	if got := store.ShortNames(); !slices.Equal(got, []string{"sts"}) {
		t.Errorf("got short names %v, want [sts]", got)
	}

	// A name with dots is not a DNS label: 422 (the store's name rule; the
	// serviceName, the same here, is not a DNS label either).
	_, err = store.Create(ctx, newStatefulSet("db.v1"), nil, &metav1.CreateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid metadata.name", "FieldValueInvalid spec.serviceName"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	in := newStatefulSet("db")
	in.Spec.RevisionHistoryLimit = ptr(int32(-1))
	in.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("0.5")}}},
	}}
	obj, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "500m" is invalid, must be an integer`,
		"spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended",
	}
	if got := warnings.List(); !slices.Equal(got, want) {
		t.Errorf("got warnings %q, want %q", got, want)
	}
	ss := obj.(*appsv1.StatefulSet)

	// Some fields of the spec are immutable (v1.37: serviceName says so).
	upd := ss.DeepCopy()
	upd.Spec.ServiceName = "other"
	_, _, err = store.Update(ctx, "db", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid spec.serviceName"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	upd = ss.DeepCopy()
	upd.Spec.Template.Spec.Containers[0].Image = "postgres:17"
	obj, _, err = store.Update(ctx, "db", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*appsv1.StatefulSet).Generation; got != 2 {
		t.Errorf("got generation %d after a template change, want 2", got)
	}
	if _, err := scale.Get(ctx, "db", &metav1.GetOptions{}); err != nil {
		t.Errorf("get scale: %v", err)
	}
}

func TestStatefulSetTable(t *testing.T) {
	ss := newStatefulSet("db")
	ss.CreationTimestamp = metav1.NewTime(time.Now().Add(-50 * time.Hour))
	ss.Spec.Replicas = ptr(int32(3))
	ss.Status.ReadyReplicas = 3
	tbl, err := TableConvertor.ConvertToTable(t.Context(), ss, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name+":"+c.Type)
	}
	// upstream's printers.go (v1.37)
	if want := []string{"Name:string", "Ready:string", "Age:string", "Containers:string", "Images:string"}; !slices.Equal(cols, want) {
		t.Errorf("got columns %v, want %v", cols, want)
	}
	if got, want := tbl.Rows[0].Cells, []any{"db", "3/3", "2d2h", "db", "postgres:16"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }
