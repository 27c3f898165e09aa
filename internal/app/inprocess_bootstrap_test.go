package app_test

import (
	"encoding/json"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/bootstrap"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/configcontroller"
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
	// The bootstrap writes as kube-apiserver (its managed fields name that
	// manager): the copies are written with the same user agent.
	network.UserAgent, inProcess.UserAgent = app.LoopbackUserAgent(), app.LoopbackUserAgent()
	viaNet := kubernetes.NewForConfigOrDie(network)
	viaProc := kubernetes.NewForConfigOrDie(inProcess)
	admin := kubernetes.NewForConfigOrDie(r.rest)
	ctx := t.Context()

	// The bootstrap policy's managed fields are kube-apiserver's, as the
	// reference records them (kube-apiserver v1.37.2, `kubectl get
	// clusterrolebinding cluster-admin -o json --show-managed-fields`).
	crb, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, "cluster-admin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const wantFields = `{"f:metadata":{"f:annotations":{".":{},"f:rbac.authorization.kubernetes.io/autoupdate":{}},"f:labels":{".":{},"f:kubernetes.io/bootstrapping":{}}},"f:roleRef":{},"f:subjects":{}}`
	if mf := crb.ManagedFields; len(mf) != 1 || mf[0].Manager != "kube-apiserver" || mf[0].Operation != metav1.ManagedFieldsOperationUpdate ||
		mf[0].Subresource != "" || mf[0].FieldsV1 == nil || string(mf[0].FieldsV1.Raw) != wantFields {
		t.Errorf("cluster-admin's managed fields: got %+v, want one Update by kube-apiserver of %s", mf, wantFields)
	}

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

// TestRepeatedAPFCreatesStoreWhatTheNetworkDoes proves that the API
// priority and fairness bootstrap objects of a process's second server,
// whose creates reuse the managed fields the first server's computed
// (handlers.WithRepeatedCreate), are stored as a copy of each created over
// the server's listener with the producer's field manager: equal but for
// name, uid, resourceVersion and timestamps, the create's managed-fields
// entry included. Status (the Dangling condition the controller writes
// later, and its managed-fields entry) is left out: it is written after
// the create, for the copies too, at a time of its own.
func TestRepeatedAPFCreatesStoreWhatTheNetworkDoes(t *testing.T) {
	startKapi(t, nil)
	pls := append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...)
	fss := append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...)
	if n, want := fieldmanager.RepeatedCreates(), len(pls)+len(fss)+len(rbac.ClusterRoles())+len(rbac.ClusterRoleBindings())+len(rbac.Roles())+len(rbac.RoleBindings()); n < want {
		t.Fatalf("after the first server's start the process holds the managed fields of %d repeated creates, want at least %d (the APF and RBAC bootstrap's)", n, want)
	}
	r := startKapi(t, nil)
	network, _, err := app.LoopbackConfigs(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	viaNet := kubernetes.NewForConfigOrDie(network)
	admin := kubernetes.NewForConfigOrDie(r.rest)
	ctx := t.Context()
	opts := metav1.CreateOptions{FieldManager: configcontroller.ProducerFieldManager}

	compare := func(kind, name string, boot, copied metav1.Object) {
		t.Helper()
		got, want := createdPart(t, copied), createdPart(t, boot)
		if !equality.Semantic.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Errorf("%s net-%s is stored as\n%s\nthe bootstrap %s as\n%s", kind, name, gj, name, wj)
		}
	}
	for _, want := range pls {
		if want.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			// Validation keeps type Exempt to the level named exempt:
			// it has no copy under another name.
			continue
		}
		o := want.DeepCopy()
		o.Name = "net-" + want.Name
		copied, err := viaNet.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, o, opts)
		if err != nil {
			t.Fatalf("create prioritylevelconfiguration %s: %v", o.Name, err)
		}
		boot, err := admin.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get prioritylevelconfiguration %s: %v", want.Name, err)
		}
		compare("PriorityLevelConfiguration", want.Name, boot, copied)
	}
	for _, want := range fss {
		o := want.DeepCopy()
		o.Name = "net-" + want.Name
		copied, err := viaNet.FlowcontrolV1().FlowSchemas().Create(ctx, o, opts)
		if err != nil {
			t.Fatalf("create flowschema %s: %v", o.Name, err)
		}
		boot, err := admin.FlowcontrolV1().FlowSchemas().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get flowschema %s: %v", want.Name, err)
		}
		compare("FlowSchema", want.Name, boot, copied)
	}
}

// createdPart is normalized(o) without status and without the
// managed-fields entries of subresources: what a create stores.
func createdPart(t *testing.T, o metav1.Object) map[string]any {
	t.Helper()
	m := normalized(t, o)
	delete(m, "status")
	meta := m["metadata"].(map[string]any)
	mfs, _ := meta["managedFields"].([]any)
	var kept []any
	for _, mf := range mfs {
		if _, ok := mf.(map[string]any)["subresource"]; !ok {
			kept = append(kept, mf)
		}
	}
	if len(kept) != 1 {
		t.Fatalf("%s has %d managed-fields entries of the main resource, want the create's one: %v", o.GetName(), len(kept), mfs)
	}
	meta["managedFields"] = kept
	return m
}
