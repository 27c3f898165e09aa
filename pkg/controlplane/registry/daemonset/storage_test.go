package daemonset

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func newDaemonSet(name string) *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
					Containers:   []corev1.Container{{Name: "agent", Image: "fluentd:v5"}},
				},
			},
		},
	}
	scheme.Scheme.Default(ds)
	return ds
}

func templateGeneration(t *testing.T, ds *appsv1.DaemonSet) string {
	t.Helper()
	v, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if !ok {
		t.Fatalf("no %s annotation in %v", appsv1.DeprecatedTemplateGeneration, ds.Annotations)
	}
	return v
}

// The template generation follows upstream's daemonset strategy (served in
// apps/v1 as the deprecated.daemonset.template.generation annotation).
func TestDaemonSetTemplateGeneration(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("apps", "v1", "daemonsets", "default")
	if got := store.ShortNames(); !slices.Equal(got, []string{"ds"}) {
		t.Errorf("got short names %v, want [ds]", got)
	}

	obj, err := store.Create(ctx, newDaemonSet("a"), nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds := obj.(*appsv1.DaemonSet)
	if got := templateGeneration(t, ds); got != "1" || ds.Generation != 1 {
		t.Errorf("got template generation %s, generation %d on create, want 1 and 1", got, ds.Generation)
	}
	// A client cannot set it: on create a value below 1 becomes 1, one
	// above is kept; on update it is the server's.
	in := newDaemonSet("b")
	in.Annotations = map[string]string{appsv1.DeprecatedTemplateGeneration: "-4"}
	obj, err = store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := templateGeneration(t, obj.(*appsv1.DaemonSet)); got != "1" {
		t.Errorf("got template generation %s for -4 on create, want 1", got)
	}
	in = newDaemonSet("c")
	in.Annotations = map[string]string{appsv1.DeprecatedTemplateGeneration: "x"}
	_, err = store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid metadata.annotations[deprecated.daemonset.template.generation]"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	upd := ds.DeepCopy()
	upd.Annotations[appsv1.DeprecatedTemplateGeneration] = "7"
	upd.Spec.MinReadySeconds = 3
	obj, _, err = store.Update(ctx, "a", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds = obj.(*appsv1.DaemonSet)
	if got := templateGeneration(t, ds); got != "1" || ds.Generation != 2 {
		t.Errorf("got template generation %s, generation %d after a spec change, want 1 and 2", got, ds.Generation)
	}
	upd = ds.DeepCopy()
	upd.Spec.Template.Spec.Containers[0].Image = "fluentd:v6"
	obj, _, err = store.Update(ctx, "a", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds = obj.(*appsv1.DaemonSet)
	if got := templateGeneration(t, ds); got != "2" || ds.Generation != 3 {
		t.Errorf("got template generation %s, generation %d after a template change, want 2 and 3", got, ds.Generation)
	}

	// /status keeps the spec and the template generation.
	st := ds.DeepCopy()
	st.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2}
	st.Spec.Template.Spec.Containers[0].Image = "other"
	st.Annotations[appsv1.DeprecatedTemplateGeneration] = "9"
	obj, _, err = status.Update(ctx, "a", registrytest.Updated{Obj: st}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds = obj.(*appsv1.DaemonSet)
	if templateGeneration(t, ds) != "2" || ds.Status.NumberReady != 2 || ds.Spec.Template.Spec.Containers[0].Image != "fluentd:v6" || ds.Generation != 3 {
		t.Errorf("after /status got %+v, want status set, spec, template generation and generation kept", ds)
	}
}

func TestDaemonSetTable(t *testing.T) {
	ds := newDaemonSet("agent")
	ds.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * time.Second))
	ds.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3, NumberAvailable: 2}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name+":"+c.Type+":"+string(rune('0'+c.Priority)))
	}
	// upstream's printers.go (v1.37)
	want := []string{"Name:string:0", "Desired:integer:0", "Current:integer:0", "Ready:integer:0", "Up-to-date:integer:0",
		"Available:integer:0", "Node Selector:string:0", "Age:string:0", "Containers:string:1", "Images:string:1", "Selector:string:1"}
	if !slices.Equal(cols, want) {
		t.Errorf("got columns %v, want %v", cols, want)
	}
	cells := []any{"agent", int64(3), int64(3), int64(2), int64(3), int64(2), "kubernetes.io/os=linux", "10s", "agent", "fluentd:v5", "app=agent"}
	if got := tbl.Rows[0].Cells; !slices.Equal(got, cells) {
		t.Errorf("got cells %v, want %v", got, cells)
	}
	ds.Spec.Template.Spec.NodeSelector = nil
	tbl, _ = TableConvertor.ConvertToTable(t.Context(), ds, nil)
	if got := tbl.Rows[0].Cells[6]; got != "<none>" {
		t.Errorf("got node selector cell %v, want <none>", got)
	}
}
