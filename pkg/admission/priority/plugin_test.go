package priority

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// classes serves fixed PriorityClasses (scheduling.k8s.io is not served on
// main yet; see the package comment).
type classes []schedulingv1.PriorityClass

func (c classes) Get(_ context.Context, _, name string) (runtime.Object, error) {
	for i := range c {
		if c[i].Name == name {
			return c[i].DeepCopy(), nil
		}
	}
	return nil, apierrors.NewNotFound(schedulingv1.Resource("priorityclasses"), name)
}

func (c classes) List(context.Context, string) (runtime.Object, error) {
	return &schedulingv1.PriorityClassList{Items: c}, nil
}

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func pc(name string, value int32, def bool, policy corev1.PreemptionPolicy) schedulingv1.PriorityClass {
	return schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: def, PreemptionPolicy: &policy}
}

// Cases and messages after upstream's plugin/pkg/admission/priority
// admission.go and admission_test.go.
func TestAdmit(t *testing.T) {
	high := pc("high", 1000, false, corev1.PreemptNever)
	def := pc("def", 10, true, corev1.PreemptLowerPriority)
	prio := func(v int32) *int32 { return &v }
	never := corev1.PreemptNever
	for _, tc := range []struct {
		name       string
		classes    classes
		pod        corev1.PodSpec
		want       string
		wantClass  string
		wantValue  int32
		wantPolicy corev1.PreemptionPolicy
	}{
		{"no class, no default", classes{high}, corev1.PodSpec{}, "", "", 0, corev1.PreemptLowerPriority},
		{"no class, global default", classes{high, def}, corev1.PodSpec{}, "", "def", 10, corev1.PreemptLowerPriority},
		{"named class", classes{high, def}, corev1.PodSpec{PriorityClassName: "high"}, "", "high", 1000, corev1.PreemptNever},
		{"missing class", classes{high}, corev1.PodSpec{PriorityClassName: "nope"}, `pods "p" is forbidden: no PriorityClass with name nope was found`, "", 0, ""},
		{"conflicting priority", classes{high}, corev1.PodSpec{PriorityClassName: "high", Priority: prio(5)},
			`pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name`, "", 0, ""},
		{"same priority is fine", classes{high}, corev1.PodSpec{PriorityClassName: "high", Priority: prio(1000)}, "", "high", 1000, corev1.PreemptNever},
		{"conflicting policy", classes{def}, corev1.PodSpec{PreemptionPolicy: &never},
			`pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name`, "", 0, ""},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: tc.pod}
		err := New(tc.classes).Admit(context.Background(), admission.Attributes{Operation: admission.Create, Resource: pods, Object: pod})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
			continue
		}
		if tc.want != "" {
			continue
		}
		if pod.Spec.PriorityClassName != tc.wantClass || pod.Spec.Priority == nil || *pod.Spec.Priority != tc.wantValue ||
			pod.Spec.PreemptionPolicy == nil || *pod.Spec.PreemptionPolicy != tc.wantPolicy {
			t.Errorf("%s: got class %q priority %v policy %v", tc.name, pod.Spec.PriorityClassName, pod.Spec.Priority, pod.Spec.PreemptionPolicy)
		}
	}
}

func TestOneGlobalDefault(t *testing.T) {
	pcs := schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
	p := New(classes{pc("def", 10, true, corev1.PreemptLowerPriority)})
	second := pc("other", 5, true, corev1.PreemptLowerPriority)
	err := p.Validate(context.Background(), admission.Attributes{Operation: admission.Create, Resource: pcs, Name: "other", Object: &second})
	if err == nil || err.Error() != `priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass def is already marked as default. Only one default can exist` {
		t.Errorf("second default: got %v", err)
	}
	same := pc("def", 11, true, corev1.PreemptLowerPriority)
	if err := p.Validate(context.Background(), admission.Attributes{Operation: admission.Update, Resource: pcs, Name: "def", Object: &same}); err != nil {
		t.Errorf("updating the default itself: %v", err)
	}
}
