package deployment

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// newDeployment is a deployment as a request body decodes: defaulted.
func newDeployment(name string) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}, {Name: "log", Image: "busybox"}}},
			},
		},
	}
	scheme.Scheme.Default(d)
	return d
}

func TestDeploymentStore(t *testing.T) {
	store, status, scale, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	var warnings registrytest.Warnings
	ctx := warning.WithRecorder(registrytest.Context("apps", "v1", "deployments", "default"), &warnings)

	if got := store.ShortNames(); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("got short names %v, want [deploy]", got)
	}
	if got := store.Categories(); !slices.Equal(got, []string{"all"}) {
		t.Errorf("got categories %v, want [all]", got)
	}

	// Create: status cleared, generation 1; a name that is not a DNS
	// label and a deprecated node label are accepted with upstream's
	// warnings.
	in := newDeployment("web.v1")
	in.Status = appsv1.DeploymentStatus{Replicas: 9}
	in.Spec.Template.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/os": "linux"}
	obj, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := obj.(*appsv1.Deployment)
	if d.Status.Replicas != 0 || d.Generation != 1 {
		t.Errorf("got status %+v generation %d, want an empty status and generation 1", d.Status, d.Generation)
	}
	if w := warnings.List(); len(w) != 2 || !strings.HasPrefix(w[0], "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [") ||
		w[1] != `spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead` {
		t.Errorf("got warnings %q, want upstream's DNS label and node label warnings", w)
	}

	// An update through the main resource cannot set the status.
	upd := d.DeepCopy()
	upd.Status.Replicas = 3
	upd.Labels = map[string]string{"tier": "front"}
	obj, _, err = store.Update(ctx, d.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d = obj.(*appsv1.Deployment)
	if d.Status.Replicas != 0 || d.Generation != 1 || d.Labels["tier"] != "front" {
		t.Errorf("got status %+v generation %d labels %v, want status kept, generation 1, labels changed", d.Status, d.Generation, d.Labels)
	}

	// /status: the status and annotations change, the spec and labels do
	// not, and the generation stays.
	st := d.DeepCopy()
	st.Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 1}
	st.Spec.Paused = true
	st.Labels = nil
	st.Annotations = map[string]string{"note": "by the controller"}
	obj, _, err = status.Update(ctx, d.Name, registrytest.Updated{Obj: st}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d = obj.(*appsv1.Deployment)
	if d.Status.ReadyReplicas != 2 || d.Spec.Paused || d.Labels["tier"] != "front" || d.Annotations["note"] == "" || d.Generation != 1 {
		t.Errorf("after /status got %+v, want status and annotations changed, spec, labels and generation kept", d)
	}
	bad := d.DeepCopy()
	bad.Status.AvailableReplicas = 5
	_, _, err = status.Update(ctx, d.Name, registrytest.Updated{Obj: bad}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid status.availableReplicas", "FieldValueInvalid status.availableReplicas"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	// /scale: read, update (generation moves), validation, conflicts.
	obj, err = scale.Get(ctx, d.Name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := obj.(*autoscalingv1.Scale)
	if s.Spec.Replicas != 1 || s.Status.Replicas != 2 || s.Status.Selector != "app=web.v1" || s.ResourceVersion != d.ResourceVersion || s.UID != d.UID {
		t.Errorf("got scale %+v, want spec 1, status 2, selector app=web.v1, the deployment's uid and resourceVersion", s)
	}
	s.Spec.Replicas = 4
	obj, _, err = scale.Update(ctx, d.Name, registrytest.Updated{Obj: s}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*autoscalingv1.Scale).Spec.Replicas; got != 4 {
		t.Errorf("got scale replicas %d, want 4", got)
	}
	obj, err = store.Get(ctx, d.Name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*appsv1.Deployment); *got.Spec.Replicas != 4 || got.Generation != 2 {
		t.Errorf("got replicas %d generation %d, want 4 and 2", *got.Spec.Replicas, got.Generation)
	}
	_, _, err = scale.Update(ctx, d.Name, registrytest.Updated{Obj: s}, nil, nil, false, &metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("got %v, want a conflict for a stale scale resourceVersion", err)
	}
	s.ResourceVersion = ""
	s.Spec.Replicas = -1
	_, _, err = scale.Update(ctx, d.Name, registrytest.Updated{Obj: s}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid spec.replicas"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	// The selector is immutable.
	sel := obj.(*appsv1.Deployment).DeepCopy()
	sel.Spec.Selector.MatchLabels["x"] = "y"
	sel.Spec.Template.Labels["x"] = "y"
	_, _, err = store.Update(ctx, d.Name, registrytest.Updated{Obj: sel}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid spec.selector"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
}

func TestDeploymentTable(t *testing.T) {
	d := newDeployment("web")
	d.CreationTimestamp = metav1.NewTime(time.Now().Add(-90 * time.Second))
	d.Spec.Replicas = ptr(int32(3))
	d.Status = appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 1}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), &appsv1.DeploymentList{Items: []appsv1.Deployment{*d}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Upstream's printers.go (v1.37): columns, types, priorities, cells.
	checkColumns(t, tbl, "Name string 0", "Ready string 0", "Up-to-date string 0", "Available string 0", "Age string 0",
		"Containers string 1", "Images string 1", "Selector string 1")
	want := []any{"web", "2/3", int64(3), int64(1), "90s", "web,log", "nginx:1.25,busybox", "app=web"}
	if got := tbl.Rows[0].Cells; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
	if _, err := TableConvertor.ConvertToTable(t.Context(), &corev1.ConfigMap{}, nil); err == nil {
		t.Error("got a table for a configmap, want an error")
	}
}

func checkColumns(t *testing.T, tbl *metav1.Table, want ...string) {
	t.Helper()
	var got []string
	for _, c := range tbl.ColumnDefinitions {
		got = append(got, c.Name+" "+c.Type+" "+string(rune('0'+c.Priority)))
		if c.Description == "" {
			t.Errorf("column %s has no description", c.Name)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("got columns %v, want %v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }
