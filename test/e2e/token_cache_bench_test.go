package e2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkBearerTokenGet is a GET of one ConfigMap with a bound
// service-account token (a TokenRequest's), over TLS through the whole
// handler chain, with kube-apiserver's token cache (10 s) and without it
// (each request verifies the JWT's signature and reads the service
// account). Client and server share the process: cpu-ns/op is the
// process's user and system CPU per request, allocs/op counts both sides;
// the difference between the two is the server's.
func BenchmarkBearerTokenGet(b *testing.B) {
	for _, bc := range []struct {
		name string
		ttl  time.Duration
	}{
		{"cache=off", -1},
		{"cache=on", 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := kapitest.Start(b, kapitest.WithOptions(func(o *kapitest.Options) { o.TokenSuccessCacheTTL = bc.ttl }))
			ctx := context.Background()
			admin := kubernetes.NewForConfigOrDie(srv.Config)
			if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "bench", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			cfg := tokenConfig(srv, tr.Status.Token)
			// The service account may read the ConfigMap only through the
			// admin's grant: bind it to cluster-admin.
			if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, benchBinding(), metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default")
			if _, err := cms.Get(ctx, "bench", metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			before := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				if _, err := cms.Get(ctx, "bench", metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

func benchBinding() *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-sa-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "bench", Namespace: "default"}},
	}
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
