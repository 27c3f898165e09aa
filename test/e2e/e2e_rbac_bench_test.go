package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkRBACThroughput measures GETs of one ConfigMap by a user with a
// client certificate (not system:masters, so the authorizer decides every
// request) under --authorization-mode=RBAC (the user is bound to view in
// the namespace) and under AlwaysAllow, on the memory backend.
func BenchmarkRBACThroughput(b *testing.B) {
	for _, mode := range []string{"RBAC", "AlwaysAllow"} {
		b.Run(mode, func(b *testing.B) {
			srv := kapitest.Start(b, kapitest.WithFlags("--authorization-mode="+mode))
			ctx := context.Background()
			admin := kubernetes.NewForConfigOrDie(srv.Config)
			if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			if _, err := admin.CoreV1().ConfigMaps("bench").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			if _, err := admin.RbacV1().RoleBindings("bench").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "view"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "bench"}}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", userKubeconfig(b, srv, "bench"))
			if err != nil {
				b.Fatal(err)
			}
			cfg.QPS, cfg.Burst = -1, 0
			user := kubernetes.NewForConfigOrDie(cfg)
			// The binding reaches the informer asynchronously.
			for {
				if _, err := user.CoreV1().ConfigMaps("bench").Get(ctx, "cm", metav1.GetOptions{}); err == nil {
					break
				}
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := user.CoreV1().ConfigMaps("bench").Get(ctx, "cm", metav1.GetOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
