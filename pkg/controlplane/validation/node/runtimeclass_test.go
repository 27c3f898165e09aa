package node

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Expected errors are upstream's (kubernetes/kubernetes v1.37
// pkg/apis/node/validation/validation.go and its tests).

func errStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s: %s", string(e.Type), e.Field, e.Detail))
	}
	return out
}

func TestValidateRuntimeClass(t *testing.T) {
	valid := func() *nodev1.RuntimeClass {
		return &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: "gvisor"},
			Handler:    "runsc",
			Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("120Mi")}},
			Scheduling: &nodev1.Scheduling{
				NodeSelector: map[string]string{"runtime": "gvisor"},
				Tolerations:  []corev1.Toleration{{Key: "runtime", Operator: corev1.TolerationOpEqual, Value: "gvisor", Effect: corev1.TaintEffectNoSchedule}},
			},
		}
	}
	if errs := ValidateRuntimeClass(valid()); len(errs) != 0 {
		t.Fatalf("valid: %v", errs)
	}
	tests := []struct {
		name   string
		mutate func(*nodev1.RuntimeClass)
		want   []string
	}{
		{"handler not a label", func(rc *nodev1.RuntimeClass) { rc.Handler = "run_sc" },
			[]string{"FieldValueInvalid handler: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}},
		// v1.37.2: +k8s:required (beta) on handler, "handler: Required value".
		{"no handler", func(rc *nodev1.RuntimeClass) { rc.Handler = "" },
			[]string{"FieldValueRequired handler: "}},
		// The path is upstream's: overhead.podFixed is validated as the
		// limits of a ResourceRequirements at "overhead".
		{"negative overhead", func(rc *nodev1.RuntimeClass) {
			rc.Overhead.PodFixed[corev1.ResourceMemory] = resource.MustParse("-1")
		}, []string{"FieldValueInvalid overhead.limits[memory]: must be greater than or equal to 0"}},
		{"bad node selector", func(rc *nodev1.RuntimeClass) { rc.Scheduling.NodeSelector = map[string]string{"bad key!": "x"} },
			[]string{"FieldValueInvalid scheduling.nodeSelector: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"}},
		{"duplicate toleration", func(rc *nodev1.RuntimeClass) {
			rc.Scheduling.Tolerations = append(rc.Scheduling.Tolerations, rc.Scheduling.Tolerations[0])
		}, []string{"FieldValueDuplicate scheduling.tolerations[1]: "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := valid()
			tc.mutate(rc)
			if diff := cmp.Diff(tc.want, errStrings(ValidateRuntimeClass(rc))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	old, upd := valid(), valid()
	upd.Handler = "kata"
	if diff := cmp.Diff([]string{"FieldValueInvalid handler: field is immutable"}, errStrings(ValidateRuntimeClassUpdateFields(upd, old))); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}
