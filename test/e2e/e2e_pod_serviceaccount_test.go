package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodServiceAccountAlias: spec.serviceAccount, the deprecated alias of
// spec.serviceAccountName, reads the same as it, whoever set either, as
// on kube-apiserver v1.37.2 (its SetDefaults_PodSpec keeps them in step,
// and defaulting also runs on reads from storage): a pod created without
// either gets serviceAccountName "default" from the ServiceAccount
// admission plugin and reads back with both.
func TestPodServiceAccountAlias(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		eventually(t, time.Minute, "the namespace's default ServiceAccount", func() error {
			_, err := e.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			return err
		})
		pods := e.cs.CoreV1().Pods(ns)
		for _, tc := range []struct {
			name       string
			set        func(*corev1.PodSpec)
			wantCreate string
		}{
			{"neither", func(*corev1.PodSpec) {}, "default"},
			{"alias only", func(s *corev1.PodSpec) { s.DeprecatedServiceAccount = "default" }, "default"}, //nolint:staticcheck // the alias under test
		} {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "sa-"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			}
			tc.set(&pod.Spec)
			created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("%s: create: %v", tc.name, err)
			}
			got, err := pods.Get(ctx, created.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for what, p := range map[string]*corev1.Pod{"create": created, "get": got} {
				if s := p.Spec; s.ServiceAccountName != tc.wantCreate || s.DeprecatedServiceAccount != tc.wantCreate { //nolint:staticcheck // the alias under test
					t.Errorf("%s: %s: serviceAccountName %q, serviceAccount %q, want both %q", tc.name, what, s.ServiceAccountName, s.DeprecatedServiceAccount, tc.wantCreate) //nolint:staticcheck // the alias under test
				}
			}
		}
	})
}
