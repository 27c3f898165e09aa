package app_test

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
)

// TestInProcessLoopbackStoresWhatTheNetworkDoes proves that the bootstrap
// objects written through the in-process loopback transport are stored
// exactly as the same writes over the server's listener (HTTPS, HTTP/2)
// store them, as they were before the bootstrap writers went in-process:
// for every bootstrap ClusterRole (but the aggregated ones, whose rules
// the aggregation fills), ClusterRoleBinding, Role and RoleBinding, the
// object the rbac/bootstrap-roles hook stored and a copy created over the
// network and one created in-process are equal but for name, uid,
// resourceVersion and timestamps, managed fields included.
//
// The server checked is the process's second: its bootstrap creates reuse
// the managed fields the first server's computed (handlers.WithRepeatedCreate),
// which must store the same objects.
func TestInProcessLoopbackStoresWhatTheNetworkDoes(t *testing.T) {
	startKapi(t, nil)
	if n := fieldmanager.RepeatedCreates(); n < len(rbac.ClusterRoles()) {
		t.Fatalf("after the first server's start the process holds the managed fields of %d repeated creates, want at least %d (the RBAC bootstrap's)", n, len(rbac.ClusterRoles()))
	}
	r := startKapi(t, nil)
	network, inProcess, err := app.LoopbackConfigs(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	viaNet := kubernetes.NewForConfigOrDie(network)
	viaProc := kubernetes.NewForConfigOrDie(inProcess)
	admin := kubernetes.NewForConfigOrDie(r.rest)
	ctx := t.Context()

	type access struct {
		create func(c kubernetes.Interface, name string) error
		get    func(name string) (metav1.Object, error)
	}
	check := func(kind, name string, a access) {
		t.Helper()
		for _, c := range []struct {
			prefix string
			client kubernetes.Interface
		}{{"net-", viaNet}, {"proc-", viaProc}} {
			if err := a.create(c.client, c.prefix+name); err != nil {
				t.Fatalf("create %s %s%s: %v", kind, c.prefix, name, err)
			}
		}
		boot, err := a.get(name)
		if err != nil {
			t.Fatalf("get %s %s: %v", kind, name, err)
		}
		want := normalized(t, boot)
		for _, prefix := range []string{"net-", "proc-"} {
			got, err := a.get(prefix + name)
			if err != nil {
				t.Fatalf("get %s %s%s: %v", kind, prefix, name, err)
			}
			if n := normalized(t, got); !equality.Semantic.DeepEqual(n, want) {
				gj, _ := json.Marshal(n)
				wj, _ := json.Marshal(want)
				t.Errorf("%s %s%s is stored as\n%s\nthe bootstrap %s as\n%s", kind, prefix, name, gj, name, wj)
			}
		}
	}

	for _, want := range rbac.ClusterRoles() {
		if want.AggregationRule != nil {
			continue
		}
		check("ClusterRole", want.Name, access{
			create: func(c kubernetes.Interface, name string) error {
				o := want.DeepCopy()
				o.Name = name
				_, err := c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
				return err
			},
			get: func(name string) (metav1.Object, error) {
				return admin.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			},
		})
	}
	for _, want := range rbac.ClusterRoleBindings() {
		check("ClusterRoleBinding", want.Name, access{
			create: func(c kubernetes.Interface, name string) error {
				o := want.DeepCopy()
				o.Name = name
				_, err := c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
				return err
			},
			get: func(name string) (metav1.Object, error) {
				return admin.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
			},
		})
	}
	for _, want := range rbac.Roles() {
		check("Role", want.Namespace+"/"+want.Name, access{
			create: func(c kubernetes.Interface, name string) error {
				o := want.DeepCopy()
				o.Name = prefixOf(name, want.Namespace) + want.Name
				_, err := c.RbacV1().Roles(want.Namespace).Create(ctx, o, metav1.CreateOptions{})
				return err
			},
			get: func(name string) (metav1.Object, error) {
				return admin.RbacV1().Roles(want.Namespace).Get(ctx, prefixOf(name, want.Namespace)+want.Name, metav1.GetOptions{})
			},
		})
	}
	for _, want := range rbac.RoleBindings() {
		check("RoleBinding", want.Namespace+"/"+want.Name, access{
			create: func(c kubernetes.Interface, name string) error {
				o := want.DeepCopy()
				o.Name = prefixOf(name, want.Namespace) + want.Name
				_, err := c.RbacV1().RoleBindings(want.Namespace).Create(ctx, o, metav1.CreateOptions{})
				return err
			},
			get: func(name string) (metav1.Object, error) {
				return admin.RbacV1().RoleBindings(want.Namespace).Get(ctx, prefixOf(name, want.Namespace)+want.Name, metav1.GetOptions{})
			},
		})
	}
}

// prefixOf is the copy's prefix ("net-", "proc-" or none) of a
// namespaced name as check builds it ("<prefix><namespace>/<name>").
func prefixOf(name, namespace string) string {
	for _, p := range []string{"net-", "proc-"} {
		if len(name) > len(p) && name[:len(p)] == p {
			return p
		}
	}
	return ""
}

// normalized is o without what differs between two creates of the same
// object: name, uid, resourceVersion, creation and managed-fields times.
func normalized(t *testing.T, o metav1.Object) map[string]any {
	t.Helper()
	var m map[string]any
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	meta := m["metadata"].(map[string]any)
	for _, k := range []string{"name", "uid", "resourceVersion", "creationTimestamp"} {
		delete(meta, k)
	}
	if mfs, ok := meta["managedFields"].([]any); ok {
		for _, mf := range mfs {
			delete(mf.(map[string]any), "time")
		}
	}
	return m
}
