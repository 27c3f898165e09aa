package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateServiceAccount(t *testing.T) {
	sa := func(mut func(*corev1.ServiceAccount)) *corev1.ServiceAccount {
		s := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder.v1", Namespace: "ns", ResourceVersion: "1"}}
		if mut != nil {
			mut(s)
		}
		return s
	}
	cases := []struct {
		name string
		sa   *corev1.ServiceAccount
		want []string
	}{
		{"valid subdomain name", sa(nil), nil},
		{"with secrets", sa(func(s *corev1.ServiceAccount) { s.Secrets = []corev1.ObjectReference{{Name: "tok"}} }), nil},
		{"bad name", sa(func(s *corev1.ServiceAccount) { s.Name = "Builder" }), []string{invalid + " metadata.name"}},
		{"no name", sa(func(s *corev1.ServiceAccount) { s.Name = "" }), []string{required + " metadata.name"}},
		{"bad generateName", sa(func(s *corev1.ServiceAccount) { s.GenerateName = "B_" }), []string{invalid + " metadata.generateName"}},
		{"unqualified finalizer", sa(func(s *corev1.ServiceAccount) { s.Finalizers = []string{"x"} }), []string{invalid + " metadata.finalizers[0]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateServiceAccount(tc.sa), tc.want...)
		})
	}
	checkErrs(t, ValidateServiceAccountUpdate(sa(func(s *corev1.ServiceAccount) { s.Namespace = "other" }), sa(nil)),
		invalid+" metadata.namespace")
	checkErrs(t, ValidateServiceAccountUpdateFields(sa(func(s *corev1.ServiceAccount) { s.Name = "X" }), sa(nil)))
}
