package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// waitQuotaUsed waits until the resourcequota controller reports used
// for every resource of want (a resource: quantity map).
func waitQuotaUsed(t *testing.T, cs kubernetes.Interface, ns, name string, want map[corev1.ResourceName]string) {
	t.Helper()
	eventually(t, 30*time.Second, "quota "+name+" used "+fmt.Sprint(want), func() error {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for r, v := range want {
			got, ok := q.Status.Used[r]
			if !ok || got.Cmp(resource.MustParse(v)) != 0 {
				return fmt.Errorf("used %v", q.Status.Used)
			}
		}
		return nil
	})
}

// TestKubectlQuotaRejection: with each kubectl (1.27, 1.33, PATH), quotas
// made with kubectl create quota get their status from the in-process
// resourcequota controller; creates over a limit are refused with
// upstream's 403 message (plugin/pkg/admission/resourcequota/controller.go
// v1.37: "exceeded quota: <name>, requested: ..., used: ..., limited:
// ..."; a cpu quota requires every container's request: "failed quota:
// <name>: must specify requests.cpu for: <containers>"); deleting an
// object gives its share back and the create then passes.
func TestKubectlQuotaRejection(t *testing.T) {
	binaries := kubectls(t)
	srv, err := memoryBackend.start()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{backend: memoryBackend.name, srv: srv}
	e.cs = mustClientset(t, e.config())
	for _, kubectl := range binaries {
		t.Run(filepath.Base(kubectl), func(t *testing.T) {
			ns := e.newNamespace(t)
			k := func(args ...string) (string, string, error) {
				return runKubectl(t, kubectl, srv.Kubeconfig, append([]string{"-n", ns}, args...)...)
			}
			if out, stderr, err := k("create", "quota", "objects", "--hard=pods=1,configmaps=2,count/secrets=1"); err != nil {
				t.Fatalf("create quota: %v\n%s%s", err, out, stderr)
			}
			if out, stderr, err := k("create", "quota", "compute", "--hard=requests.cpu=1"); err != nil {
				t.Fatalf("create quota: %v\n%s%s", err, out, stderr)
			}
			waitQuotaUsed(t, e.cs, ns, "objects", map[corev1.ResourceName]string{"pods": "0", "configmaps": "0", "count/secrets": "0"})
			waitQuotaUsed(t, e.cs, ns, "compute", map[corev1.ResourceName]string{"requests.cpu": "0"})

			for _, cm := range []string{"a", "b"} {
				if out, stderr, err := k("create", "configmap", cm); err != nil {
					t.Fatalf("create configmap %s: %v\n%s%s", cm, err, out, stderr)
				}
			}
			_, stderr, err := k("create", "configmap", "c")
			if want := `configmaps "c" is forbidden: exceeded quota: objects, requested: configmaps=1, used: configmaps=2, limited: configmaps=2`; err == nil || !strings.Contains(stderr, want) {
				t.Errorf("third configmap: %v\n%s\nwant %s", err, stderr, want)
			}
			if out, stderr, err := k("create", "secret", "generic", "s1", "--from-literal=a=b"); err != nil {
				t.Fatalf("create secret: %v\n%s%s", err, out, stderr)
			}
			_, stderr, err = k("create", "secret", "generic", "s2", "--from-literal=a=b")
			if want := `secrets "s2" is forbidden: exceeded quota: objects, requested: count/secrets=1, used: count/secrets=1, limited: count/secrets=1`; err == nil || !strings.Contains(stderr, want) {
				t.Errorf("second secret: %v\n%s\nwant %s", err, stderr, want)
			}

			// A pod without a cpu request under a cpu quota.
			_, stderr, err = k("run", "nocpu", "--image=registry.k8s.io/pause:3.10", "--restart=Never")
			if want := `pods "nocpu" is forbidden: failed quota: compute: must specify requests.cpu for: nocpu`; err == nil || !strings.Contains(stderr, want) {
				t.Errorf("pod without request: %v\n%s\nwant %s", err, stderr, want)
			}
			podYAML := func(name, cpu string) string {
				return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n    resources:\n      requests:\n        cpu: %s\n", name, cpu)
			}
			podFile := func(name, cpu string) string {
				p := filepath.Join(t.TempDir(), name+".yaml")
				if err := os.WriteFile(p, []byte(podYAML(name, cpu)), 0o600); err != nil {
					t.Fatal(err)
				}
				return p
			}
			if out, stderr, err := k("create", "-f", podFile("p1", "600m")); err != nil {
				t.Fatalf("create p1: %v\n%s%s", err, out, stderr)
			}
			_, stderr, err = k("create", "-f", podFile("p2", "100m"))
			if want := `pods "p2" is forbidden: exceeded quota: objects, requested: pods=1, used: pods=1, limited: pods=1`; err == nil || !strings.Contains(stderr, want) {
				t.Errorf("second pod: %v\n%s\nwant %s", err, stderr, want)
			}
			waitQuotaUsed(t, e.cs, ns, "compute", map[corev1.ResourceName]string{"requests.cpu": "600m"})
			out, _, _ := k("get", "quota", "compute", "--no-headers")
			if f := strings.Fields(out); len(f) < 3 || f[1] != "requests.cpu:" || f[2] != "600m/1" {
				t.Errorf("get quota compute: %q, want requests.cpu: 600m/1", out)
			}

			// Deleting gives back: the third configmap then fits.
			if out, stderr, err := k("delete", "configmap", "a"); err != nil {
				t.Fatalf("delete: %v\n%s%s", err, out, stderr)
			}
			waitQuotaUsed(t, e.cs, ns, "objects", map[corev1.ResourceName]string{"configmaps": "1"})
			if out, stderr, err := k("create", "configmap", "c"); err != nil {
				t.Errorf("configmap after a delete: %v\n%s%s", err, out, stderr)
			}
		})
	}
}

// TestQuotaLastSlotConcurrency: 20 clients create configmaps at once in a
// namespace whose quota has 5 left; exactly 5 are created, the others get
// the quota's 403, and the quota's used is 5 (admission charges the quota
// with its resourceVersion as precondition and rechecks on conflict).
func TestQuotaLastSlotConcurrency(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		q := &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "cms"},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("5")}},
		}
		if _, err := e.cs.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitQuotaUsed(t, e.cs, ns, "cms", map[corev1.ResourceName]string{"count/configmaps": "0"})
		const clients = 20
		var wg sync.WaitGroup
		errs := make([]error, clients)
		for i := range clients {
			wg.Go(func() {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
				_, errs[i] = e.cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			})
		}
		wg.Wait()
		created := 0
		for i, err := range errs {
			switch {
			case err == nil:
				created++
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: cms, requested: count/configmaps=1, used: count/configmaps=5, limited: count/configmaps=5"):
			default:
				t.Errorf("create cm-%d: %v", i, err)
			}
		}
		if created != 5 {
			t.Errorf("%d configmaps created, want 5", created)
		}
		list, err := e.cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 5 {
			t.Errorf("%d configmaps stored, want 5", len(list.Items))
		}
		got, err := e.cs.CoreV1().ResourceQuotas(ns).Get(ctx, "cms", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if used := got.Status.Used["count/configmaps"]; used.Value() != 5 {
			t.Errorf("quota used %s, want 5", used.String())
		}
	})
}
