package controlplane

import (
	"context"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/namespace"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// TestBootstrapNamespacesExisting: the system namespaces are created once,
// as kube-apiserver's writes (its field manager); a second run leaves the
// existing ones as they are and does not compute the creates it would
// have made (~55 allocations per namespace for its read; computing the
// create's managed fields and failing it cost ~140 even with the repeated
// creates' cache warm, and far more in a fresh process).
func TestBootstrapNamespacesExisting(t *testing.T) {
	ns, _, _, err := namespace.NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Destroy)
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	if err := bootstrapNamespaces(ctx, ns, logger); err != nil {
		t.Fatal(err)
	}
	rvs := map[string]string{}
	for _, name := range systemNamespaces {
		obj, err := ns.Get(systemContext(ctx, ""), name, &metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s after the first run: %v", name, err)
		}
		n := obj.(*corev1.Namespace)
		if len(n.ManagedFields) != 1 || n.ManagedFields[0].Manager != "kube-apiserver" {
			t.Errorf("%s: managed fields %v, want kube-apiserver's create", name, n.ManagedFields)
		}
		rvs[name] = n.ResourceVersion
	}

	allocs := testing.AllocsPerRun(10, func() {
		if err := bootstrapNamespaces(ctx, ns, logger); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocations of a run with every namespace present: %.0f", allocs)
	if max := 100.0 * float64(len(systemNamespaces)); allocs > max {
		t.Errorf("a run with every namespace present allocates %.0f times (> %.0f): it computes creates it does not make", allocs, max)
	}
	for _, name := range systemNamespaces {
		obj, err := ns.Get(systemContext(ctx, ""), name, &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rv := obj.(*corev1.Namespace).ResourceVersion; rv != rvs[name] {
			t.Errorf("%s: resourceVersion %s after the later runs, want %s (unchanged)", name, rv, rvs[name])
		}
	}

}
