package podtemplate

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/controlplane/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func template(name string) *corev1.PodTemplate {
	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "web", Image: "nginx:1.25"}, {Name: "log", Image: "fluentd"},
			}},
		},
	}
	defaultscorev1.SetObjectDefaults_PodTemplate(pt)
	return pt
}

// Expected behaviour: upstream's podtemplate strategy and printer
// (pkg/registry/core/podtemplate, printPodTemplate; v1.37).
func TestPodTemplates(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("", "v1", "podtemplates", "default")

	out, err := store.Create(ctx, template("web"), nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pt := out.(*corev1.PodTemplate)
	if pt.Generation != 1 {
		t.Errorf("got generation %d, want 1", pt.Generation)
	}

	// Labels change nothing; the template bumps the generation.
	labelled := pt.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	out, _, err = store.Update(ctx, "web", registrytest.Updated{Obj: labelled}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil || out.(*corev1.PodTemplate).Generation != 1 {
		t.Fatalf("label update: got %v, %v; want generation 1", out, err)
	}
	changed := out.(*corev1.PodTemplate).DeepCopy()
	changed.Template.Spec.Containers[0].Image = "nginx:1.26"
	out, _, err = store.Update(ctx, "web", registrytest.Updated{Obj: changed}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil || out.(*corev1.PodTemplate).Generation != 2 {
		t.Fatalf("template update: got %v, %v; want generation 2", out, err)
	}

	// The template is validated as a pod spec, at template.spec.
	bad := template("bad")
	bad.Template.Spec.Containers[0].Image = ""
	bad.Template.Spec.RestartPolicy = "Sometimes"
	_, err = store.Create(ctx, bad, nil, &metav1.CreateOptions{})
	want := []string{"FieldValueRequired template.spec.containers[0].image", "FieldValueNotSupported template.spec.restartPolicy"}
	if got := registrytest.Causes(t, err); !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	tbl, err := store.ConvertToTable(context.Background(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Containers", "Images", "Pod Labels"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"web", "web,log", "nginx:1.26,fluentd", "app=web,tier=front"}, tbl.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
