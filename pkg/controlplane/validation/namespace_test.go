package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func namespace(mut func(*corev1.Namespace)) *corev1.Namespace {
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", ResourceVersion: "1"},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	if mut != nil {
		mut(ns)
	}
	return ns
}

func TestValidateNamespace(t *testing.T) {
	cases := []struct {
		name string
		ns   *corev1.Namespace
		want []string
	}{
		{"valid", namespace(nil), nil},
		{"dns label only", namespace(func(n *corev1.Namespace) { n.Name = "a.b" }), []string{invalid + " metadata.name"}},
		{"too long", namespace(func(n *corev1.Namespace) { n.Name = strings.Repeat("a", 64) }), []string{invalid + " metadata.name"}},
		{"upper case", namespace(func(n *corev1.Namespace) { n.Name = "Team" }), []string{invalid + " metadata.name"}},
		{"namespace set", namespace(func(n *corev1.Namespace) { n.Namespace = "x" }), []string{forbidden + " metadata.namespace"}},
		{"qualified spec finalizer", namespace(func(n *corev1.Namespace) {
			n.Spec.Finalizers = append(n.Spec.Finalizers, "example.com/cleanup")
		}), nil},
		{"unqualified spec finalizer", namespace(func(n *corev1.Namespace) { n.Spec.Finalizers = []corev1.FinalizerName{"mine"} }),
			[]string{invalid + " spec.finalizers"}},
		{"malformed spec finalizer", namespace(func(n *corev1.Namespace) { n.Spec.Finalizers = []corev1.FinalizerName{"a/b/c"} }),
			[]string{invalid + " spec.finalizers"}},
		{"unqualified metadata finalizer", namespace(func(n *corev1.Namespace) { n.Finalizers = []string{"kubernetes", "mine"} }),
			[]string{invalid + " metadata.finalizers[1]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateNamespace(tc.ns), tc.want...)
		})
	}
	checkDetail(t, ValidateNamespace(namespace(func(n *corev1.Namespace) { n.Spec.Finalizers = []corev1.FinalizerName{"mine"} })),
		"spec.finalizers", "name is neither a standard finalizer name nor is it fully qualified")
}

func TestValidateNamespaceUpdates(t *testing.T) {
	now := metav1.Now()
	deleting := func(n *corev1.Namespace) { n.DeletionTimestamp = &now }
	cases := []struct {
		name     string
		validate func(newNs, oldNs *corev1.Namespace) []string
		old, new *corev1.Namespace
		want     []string
	}{
		{"update labels", fieldsOf(ValidateNamespaceUpdate), namespace(nil),
			namespace(func(n *corev1.Namespace) { n.Labels = map[string]string{"a": "b"} }), nil},
		{"update rename", fieldsOf(ValidateNamespaceUpdate), namespace(nil),
			namespace(func(n *corev1.Namespace) { n.Name = "other" }), []string{invalid + " metadata.name"}},
		{"status active", fieldsOf(ValidateNamespaceStatusUpdate), namespace(nil), namespace(nil), nil},
		{"status terminating without deletion", fieldsOf(ValidateNamespaceStatusUpdate), namespace(nil),
			namespace(func(n *corev1.Namespace) { n.Status.Phase = corev1.NamespaceTerminating }), []string{invalid + " status.Phase"}},
		{"status active while deleting", fieldsOf(ValidateNamespaceStatusUpdate), namespace(deleting),
			namespace(deleting), []string{invalid + " status.Phase"}},
		{"status terminating while deleting", fieldsOf(ValidateNamespaceStatusUpdate), namespace(deleting),
			namespace(func(n *corev1.Namespace) { deleting(n); n.Status.Phase = corev1.NamespaceTerminating }), nil},
		{"finalize empties", fieldsOf(ValidateNamespaceFinalizeUpdate), namespace(nil),
			namespace(func(n *corev1.Namespace) { n.Spec.Finalizers = nil }), nil},
		{"finalize bad name", fieldsOf(ValidateNamespaceFinalizeUpdate), namespace(nil),
			namespace(func(n *corev1.Namespace) { n.Spec.Finalizers = []corev1.FinalizerName{"kubernetes", "bad"} }),
			[]string{invalid + " spec.finalizers[1]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.validate(tc.new, tc.old)
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
	errs := ValidateNamespaceStatusUpdateFields(namespace(func(n *corev1.Namespace) { n.Status.Phase = "" }), namespace(nil))
	checkDetail(t, errs, "status.Phase", "may only be 'Active' if `deletionTimestamp` is empty")
	errs = ValidateNamespaceStatusUpdateFields(namespace(deleting), namespace(deleting))
	checkDetail(t, errs, "status.Phase", "may only be 'Terminating' if `deletionTimestamp` is not empty")
	checkErrs(t, ValidateNamespaceFinalizeUpdateFields(namespace(func(n *corev1.Namespace) {
		n.Name = "Bad"
		n.Spec.Finalizers = []corev1.FinalizerName{"x"}
	}), namespace(nil)), invalid+" spec.finalizers[0]")
}

// fieldsOf adapts an update validation function to summarized errors.
func fieldsOf(f func(newNs, oldNs *corev1.Namespace) field.ErrorList) func(newNs, oldNs *corev1.Namespace) []string {
	return func(newNs, oldNs *corev1.Namespace) []string { return summarize(f(newNs, oldNs)) }
}
