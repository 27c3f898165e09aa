package generic

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestInternalValues(t *testing.T) {
	strategy := appsv1.DaemonSetUpdateStrategy{Type: "Bogus"}
	p := field.NewPath("spec", "updateStrategy")
	supported := []string{"RollingUpdate", "OnDelete"}
	handwritten := func() *field.Error { return field.NotSupported(p, strategy, supported) }
	// kube-apiserver v1.37.2 answered a DaemonSet with updateStrategy type
	// Bogus with this message (internal apps.DaemonSetUpdateStrategy).
	const internal = `spec.updateStrategy: Unsupported value: {"Type":"Bogus","RollingUpdate":null}: supported values: "RollingUpdate", "OnDelete"`
	const versioned = `spec.updateStrategy: Unsupported value: {"type":"Bogus"}: supported values: "RollingUpdate", "OnDelete"`
	for _, c := range []struct {
		name string
		obj  runtime.Object
		err  *field.Error
		want string
	}{
		{"handwritten", &appsv1.DaemonSet{}, handwritten(), internal},
		{"covered, not enforced", &appsv1.DaemonSet{}, handwritten().MarkCoveredByDeclarative(), internal},
		{"declarative", &appsv1.DaemonSet{}, handwritten().MarkCoveredByDeclarative().MarkBeta(), versioned},
		{"custom resource", &unstructured.Unstructured{}, handwritten(), versioned},
		{"scalar", &appsv1.DaemonSet{}, field.Invalid(p, "x", "bad"), `spec.updateStrategy: Invalid value: "x": bad`},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := field.ErrorList{field.Required(field.NewPath("a"), ""), c.err}
			got := internalValues(c.obj, errs)
			if len(got) != 2 || got[0] != errs[0] {
				t.Fatalf("got %v", got)
			}
			if s := got[1].Error(); s != c.want {
				t.Errorf("got  %s\nwant %s", s, c.want)
			}
			if got[1] != c.err && c.err.BadValue != any(strategy) {
				t.Error("the caller's error was changed")
			}
		})
	}
}
