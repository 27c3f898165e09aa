package scheduling

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Expected errors are upstream's (kubernetes/kubernetes v1.37
// pkg/apis/scheduling/validation/validation.go and its tests).

func errStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s: %s", string(e.Type), e.Field, e.Detail))
	}
	return out
}

func TestSystemPriorityClasses(t *testing.T) {
	// pkg/apis/scheduling/types.go: SystemCriticalPriority is
	// 2 * HighestUserDefinablePriority; system-node-critical is 1000 more.
	got := map[string]int32{}
	for _, pc := range SystemPriorityClasses() {
		got[pc.Name] = pc.Value
		if errs := ValidatePriorityClass(pc); len(errs) != 0 {
			t.Errorf("%s: %v", pc.Name, errs)
		}
	}
	if diff := cmp.Diff(map[string]int32{"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}, got); diff != "" {
		t.Errorf("system classes (-want +got):\n%s", diff)
	}
}

func TestValidatePriorityClass(t *testing.T) {
	valid := func() *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high-priority"}, Value: 1000000, PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority)}
	}
	if errs := ValidatePriorityClass(valid()); len(errs) != 0 {
		t.Fatalf("valid: %v", errs)
	}
	const reserved = "FieldValueForbidden metadata.name: priority class names with 'system-' prefix are reserved for system use only. error: "
	tests := []struct {
		name   string
		mutate func(*schedulingv1.PriorityClass)
		want   []string
	}{
		{"unknown system name", func(pc *schedulingv1.PriorityClass) { pc.Name = "system-foo" },
			[]string{reserved + "system-foo is not a known system priority class"}},
		{"system name, wrong value", func(pc *schedulingv1.PriorityClass) { pc.Name = "system-node-critical" },
			[]string{reserved + "value of system-node-critical PriorityClass must be 2000001000"}},
		{"system name, global default", func(pc *schedulingv1.PriorityClass) {
			pc.Name, pc.Value, pc.GlobalDefault = "system-cluster-critical", 2000000000, true
		}, []string{reserved + "globalDefault of system-cluster-critical PriorityClass must be false"}},
		{"value too high", func(pc *schedulingv1.PriorityClass) { pc.Value = 1000000001 },
			[]string{"FieldValueForbidden value: maximum allowed value of a user defined priority is 1000000000"}},
		{"highest user value", func(pc *schedulingv1.PriorityClass) { pc.Value = 1000000000 }, nil},
		{"negative value", func(pc *schedulingv1.PriorityClass) { pc.Value = -5 }, nil},
		{"bad preemption policy", func(pc *schedulingv1.PriorityClass) { pc.PreemptionPolicy = ptr.To[corev1.PreemptionPolicy]("Always") },
			[]string{`FieldValueNotSupported preemptionPolicy: supported values: "PreemptLowerPriority", "Never"`}},
		{"bad name", func(pc *schedulingv1.PriorityClass) { pc.Name = "High" },
			[]string{"FieldValueInvalid metadata.name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pc := valid()
			tc.mutate(pc)
			if diff := cmp.Diff(tc.want, errStrings(ValidatePriorityClass(pc))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	old, upd := valid(), valid()
	upd.Value = 5
	upd.PreemptionPolicy = ptr.To(corev1.PreemptNever)
	want := []string{"FieldValueForbidden value: may not be changed in an update.", `FieldValueInvalid preemptionPolicy: field is immutable`}
	if diff := cmp.Diff(want, errStrings(ValidatePriorityClassUpdateFields(upd, old))); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}
