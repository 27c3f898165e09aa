package controlplane_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestNetworkingStorageSchedulingNodeThroughServer serves the four groups
// from a full server, on the memory backend and on embedded etcd:
// discovery, upstream's defaults on every write path, generation and the
// status split, protobuf and watch.
func TestNetworkingStorageSchedulingNodeThroughServer(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testNetStorageThroughServer(t) })
	t.Run("etcd", func(t *testing.T) { testNetStorageThroughServer(t, kapitest.WithEmbeddedEtcd()) })
}

func testNetStorageThroughServer(t *testing.T, opts ...kapitest.Option) {
	srv := kapitest.Start(t, opts...)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("discovery", func(t *testing.T) { testNetStorageDiscovery(t, cs) })
	t.Run("defaults on every write path", func(t *testing.T) { testNetworkPolicyDefaultsOnWrites(t, cs) })
	t.Run("generation and status", func(t *testing.T) { testNetStorageGenerationAndStatus(t, cs) })
	t.Run("csinodes status", func(t *testing.T) { testCSINodeStatus(t, cs) })
	t.Run("protobuf and watch", func(t *testing.T) { testNetStorageProtobuf(t, srv) })
	t.Run("openapi", func(t *testing.T) { testNetStorageOpenAPI(t, cs) })
}

// The OpenAPI v3 document of each group-version has upstream's operation
// IDs (a sample: collection, namespaced, status and cluster-scoped ones).
func testNetStorageOpenAPI(t *testing.T, cs kubernetes.Interface) {
	for path, ids := range map[string][]string{
		"/openapi/v3/apis/networking.k8s.io/v1": {
			"listNetworkingV1IngressForAllNamespaces", "replaceNetworkingV1NamespacedIngressStatus",
			"createNetworkingV1NamespacedNetworkPolicy", "deleteNetworkingV1IPAddress", "patchNetworkingV1ServiceCIDRStatus",
			"readNetworkingV1IngressClass",
		},
		"/openapi/v3/apis/storage.k8s.io/v1": {
			"listStorageV1StorageClass", "readStorageV1VolumeAttachmentStatus", "listStorageV1CSIStorageCapacityForAllNamespaces",
			"deleteStorageV1CollectionCSINode", "readStorageV1CSINodeStatus", "createStorageV1CSIDriver", "readStorageV1VolumeAttributesClass",
		},
		"/openapi/v3/apis/scheduling.k8s.io/v1": {"deleteSchedulingV1PriorityClass", "watchSchedulingV1PriorityClassList"},
		"/openapi/v3/apis/node.k8s.io/v1":       {"listNodeV1RuntimeClass", "replaceNodeV1RuntimeClass"},
	} {
		body, err := cs.Discovery().RESTClient().Get().AbsPath(path).Do(t.Context()).Raw()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, id := range ids {
			if !strings.Contains(string(body), `"operationId":"`+id+`"`) {
				t.Errorf("%s: no operation %s", path, id)
			}
		}
	}
}

// Discovery lists upstream's resources, scopes, short names and verbs
// (kube-apiserver v1.37 `kubectl api-resources` for these groups).
func testNetStorageDiscovery(t *testing.T, cs kubernetes.Interface) {
	all := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	status := []string{"get", "patch", "update"}
	type res struct {
		namespaced bool
		short      string
		verbs      []string
	}
	want := map[string]map[string]res{
		"networking.k8s.io/v1": {
			"ingresses": {true, "ing", all}, "ingresses/status": {true, "", status},
			"ingressclasses": {false, "", all}, "networkpolicies": {true, "netpol", all},
			"ipaddresses": {false, "ip", all}, "servicecidrs": {false, "", all}, "servicecidrs/status": {false, "", status},
		},
		"storage.k8s.io/v1": {
			"storageclasses": {false, "sc", all}, "csidrivers": {false, "", all}, "csinodes": {false, "", all}, "csinodes/status": {false, "", status},
			"csistoragecapacities": {true, "", all}, "volumeattachments": {false, "", all},
			"volumeattachments/status": {false, "", status}, "volumeattributesclasses": {false, "vac", all},
		},
		"scheduling.k8s.io/v1": {"priorityclasses": {false, "pc", all}},
		"node.k8s.io/v1":       {"runtimeclasses": {false, "", all}},
	}
	for gv, resources := range want {
		list, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("%s: %v", gv, err)
		}
		got := map[string]res{}
		for _, r := range list.APIResources {
			verbs := slices.Clone([]string(r.Verbs))
			sort.Strings(verbs)
			got[r.Name] = res{r.Namespaced, strings.Join(r.ShortNames, ","), verbs}
		}
		for name, w := range resources {
			g, ok := got[name]
			if !ok || g.namespaced != w.namespaced || g.short != w.short || !slices.Equal(g.verbs, w.verbs) {
				t.Errorf("%s %s: got %+v (served %v), want %+v", gv, name, g, ok, w)
			}
		}
		if len(got) != len(resources) {
			t.Errorf("%s: serves %d resources, want %d: %v", gv, len(got), len(resources), got)
		}
	}
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		switch g.Name {
		case "networking.k8s.io", "storage.k8s.io", "scheduling.k8s.io", "node.k8s.io":
			if len(g.Versions) != 1 || g.PreferredVersion.Version != "v1" {
				t.Errorf("group %s: versions %v", g.Name, g.Versions)
			}
		}
	}
}

func bareNetworkPolicy(name string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: new(intstr.FromInt32(80))}}}},
			Egress:  []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: new(intstr.FromInt32(53))}}}},
		},
	}
}

func checkNetworkPolicyDefaults(t *testing.T, what string, np *networkingv1.NetworkPolicy, wantGen int64) {
	t.Helper()
	types := fmt.Sprint(np.Spec.PolicyTypes)
	if types != "[Ingress Egress]" || len(np.Spec.Ingress) != 1 || np.Spec.Ingress[0].Ports[0].Protocol == nil ||
		*np.Spec.Ingress[0].Ports[0].Protocol != corev1.ProtocolTCP || np.Spec.Egress[0].Ports[0].Protocol == nil || np.Generation != wantGen {
		t.Errorf("%s: policyTypes %s, ingress %+v, egress %+v, generation %d (want %d)", what, types, np.Spec.Ingress, np.Spec.Egress, np.Generation, wantGen)
	}
}

// Each write path clears defaulted fields; the server defaults them again
// (decoding the body, or the patched object), so the spec does not change
// and the generation stays 1.
func testNetworkPolicyDefaultsOnWrites(t *testing.T, cs kubernetes.Interface) {
	ctx := t.Context()
	nps := cs.NetworkingV1().NetworkPolicies("default")
	created, err := nps.Create(ctx, bareNetworkPolicy("paths"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkNetworkPolicyDefaults(t, "create", created, 1)
	put := created.DeepCopy()
	put.Spec.PolicyTypes = nil
	put.Spec.Ingress[0].Ports[0].Protocol = nil
	updated, err := nps.Update(ctx, put, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkNetworkPolicyDefaults(t, "update", updated, 1)
	for _, p := range []struct {
		name  string
		typ   types.PatchType
		patch string
	}{
		{"json patch", types.JSONPatchType, `[{"op":"remove","path":"/spec/policyTypes"},{"op":"remove","path":"/spec/egress/0/ports/0/protocol"}]`},
		{"merge patch", types.MergePatchType, `{"spec":{"policyTypes":null,"ingress":[{"ports":[{"port":80}]}]}}`},
		{"strategic merge patch", types.StrategicMergePatchType, `{"spec":{"policyTypes":null,"egress":[{"ports":[{"port":53}]}]}}`},
	} {
		got, err := nps.Patch(ctx, "paths", p.typ, []byte(p.patch), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		checkNetworkPolicyDefaults(t, p.name, got, 1)
	}
	applied := bareNetworkPolicy("applied")
	applied.TypeMeta = metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"}
	body, err := json.Marshal(applied)
	if err != nil {
		t.Fatal(err)
	}
	got, err := nps.Patch(ctx, "applied", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "test"})
	if err != nil {
		t.Fatalf("apply (create): %v", err)
	}
	checkNetworkPolicyDefaults(t, "apply (create)", got, 1)
	applied.Spec.Ingress[0].Ports[0].Port = new(intstr.FromInt32(8080))
	body, _ = json.Marshal(applied)
	got, err = nps.Patch(ctx, "applied", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "test"})
	if err != nil {
		t.Fatalf("apply (update): %v", err)
	}
	checkNetworkPolicyDefaults(t, "apply (update)", got, 2)
	read, err := nps.Get(ctx, "paths", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkNetworkPolicyDefaults(t, "get", read, 1)
}

// Ingresses: status cleared on create, kept by main-resource updates,
// written through /status without a generation bump; a spec change bumps
// the generation. VolumeAttachments: the spec is immutable, the status is
// written through /status.
func testNetStorageGenerationAndStatus(t *testing.T, cs kubernetes.Interface) {
	ctx := t.Context()
	ings := cs.NetworkingV1().Ingresses("default")
	in := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "gen"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}},
		}},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}}},
	}
	ing, err := ings.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ing.Generation != 1 || len(ing.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("create: generation %d, status %+v", ing.Generation, ing.Status)
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}
	ing, err = ings.UpdateStatus(ctx, ing, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ing.Generation != 1 || len(ing.Status.LoadBalancer.Ingress) != 1 {
		t.Errorf("status update: generation %d, status %+v", ing.Generation, ing.Status)
	}
	ing.Spec.DefaultBackend.Service.Port.Number = 8080
	ing.Status = networkingv1.IngressStatus{}
	ing, err = ings.Update(ctx, ing, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ing.Generation != 2 || len(ing.Status.LoadBalancer.Ingress) != 1 {
		t.Errorf("spec update: generation %d, status %+v", ing.Generation, ing.Status)
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: "192.0.2.9"}}
	if _, err := ings.UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err == nil ||
		!strings.Contains(err.Error(), "status.loadBalancer.ingress[0].hostname: Invalid value: \"192.0.2.9\": must be a DNS name, not an IP address") {
		t.Errorf("invalid status: %v", err)
	}

	vas := cs.StorageV1().VolumeAttachments()
	va, err := vas.Create(ctx, &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "va"},
		Spec:       storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: new("pv-1")}},
		Status:     storagev1.VolumeAttachmentStatus{Attached: true},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if va.Status.Attached {
		t.Error("status set on create")
	}
	va.Status.Attached = true
	va.Status.AttachmentMetadata = map[string]string{"devicePath": "/dev/xvdb"}
	if va, err = vas.UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil || !va.Status.Attached {
		t.Fatalf("status update: %v %+v", err, va)
	}
	va.Spec.NodeName = "node-2"
	if _, err := vas.Update(ctx, va, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec: Invalid value") || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("spec change: %v", err)
	}
}

// Protobuf reads and a watch of priority classes; the system classes are
// listed.
func testNetStorageProtobuf(t *testing.T, srv *kapitest.Server) {
	cfg := rest.CopyConfig(srv.Config)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	pcs := cs.SchedulingV1().PriorityClasses()
	list, err := pcs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pc := range list.Items {
		names = append(names, pc.Name)
	}
	if !slices.Contains(names, "system-cluster-critical") || !slices.Contains(names, "system-node-critical") {
		t.Errorf("priority classes %v", names)
	}
	w, err := pcs.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "proto"}, Value: 7}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		pc, ok := ev.Object.(*schedulingv1.PriorityClass)
		if ev.Type != watch.Added || !ok || pc.Name != "proto" || pc.PreemptionPolicy == nil {
			t.Errorf("event %s %#v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	for _, get := range []func() error{
		func() error { _, err := cs.StorageV1().CSIDrivers().List(ctx, metav1.ListOptions{}); return err },
		func() error { _, err := cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{}); return err },
		func() error {
			_, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
			return err
		},
	} {
		if err := get(); err != nil {
			t.Errorf("protobuf read: %v", err)
		}
	}
}

// The system priority classes and the default ServiceCIDR survive a
// restart on the same etcd data, and the start hooks do not fail on them.
func TestNetStorageBootstrapAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	for i := range 2 {
		srv, err := kapitest.StartE(dir, logger, kapitest.WithEmbeddedEtcd())
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		cs := kubernetes.NewForConfigOrDie(srv.Config)
		for _, name := range []string{"system-cluster-critical", "system-node-critical"} {
			if _, err := cs.SchedulingV1().PriorityClasses().Get(t.Context(), name, metav1.GetOptions{}); err != nil {
				t.Errorf("start %d: %s: %v", i, name, err)
			}
		}
		if _, err := cs.NetworkingV1().ServiceCIDRs().Get(t.Context(), "kubernetes", metav1.GetOptions{}); err != nil {
			t.Errorf("start %d: servicecidr: %v", i, err)
		}
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// csinodes/status (served since v1.37, upstream's
// pkg/registry/storage/csinode/storage): create clears the status, the
// main resource keeps it, /status keeps the spec and, with upstream's alpha
// gate CSIVolumeHealth off by default, drops status.storageHealth.
func testCSINodeStatus(t *testing.T, cs kubernetes.Interface) {
	ctx := t.Context()
	nodes := cs.StorageV1().CSINodes()
	health := []storagev1.StorageHealth{{Name: "csi.example.com", HealthConditions: []storagev1.StorageHealthCondition{{
		Status: storagev1.StorageDegraded, Reason: "SlowBackend",
	}}}}
	driver := storagev1.CSINodeDriver{Name: "csi.example.com", NodeID: "node-a"}
	n, err := nodes.Create(ctx, &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: "csinode-status"},
		Spec:       storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{driver}},
		Status:     storagev1.CSINodeStatus{StorageHealth: health},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Status.StorageHealth) != 0 {
		t.Errorf("create kept status %+v, want it cleared", n.Status)
	}
	var got storagev1.CSINode
	if err := cs.StorageV1().RESTClient().Get().Resource("csinodes").Name(n.Name).SubResource("status").Do(ctx).Into(&got); err != nil {
		t.Fatalf("get csinodes/status: %v", err)
	}
	if got.Name != n.Name || got.ResourceVersion != n.ResourceVersion {
		t.Errorf("get csinodes/status: %s %s, want %s %s", got.Name, got.ResourceVersion, n.Name, n.ResourceVersion)
	}
	// Through /status: the spec and the labels are kept, storageHealth dropped.
	upd := n.DeepCopy()
	upd.Labels = map[string]string{"changed": "yes"}
	upd.Spec.Drivers = append(upd.Spec.Drivers, storagev1.CSINodeDriver{Name: "other.example.com", NodeID: "node-a"})
	upd.Status.StorageHealth = health
	st, err := nodes.UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update csinodes/status: %v", err)
	}
	if len(st.Spec.Drivers) != 1 || len(st.Status.StorageHealth) != 0 || st.Labels["changed"] != "" {
		t.Errorf("update csinodes/status: spec %+v, status %+v, labels %v; want spec and labels kept, storageHealth dropped", st.Spec, st.Status, st.Labels)
	}
	// Through the main resource: the spec changes.
	st.Spec.Drivers = append(st.Spec.Drivers, storagev1.CSINodeDriver{Name: "other.example.com", NodeID: "node-a"})
	main, err := nodes.Update(ctx, st, metav1.UpdateOptions{})
	if err != nil || len(main.Spec.Drivers) != 2 {
		t.Errorf("update csinode: %v %+v", err, main)
	}
	// A missing object: 404, never created.
	missing := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "csinode-missing", ResourceVersion: "1"}}
	if _, err := nodes.UpdateStatus(ctx, missing, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("update status of a missing csinode: %v, want 404", err)
	}
	if err := nodes.Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil {
		t.Error(err)
	}
}
