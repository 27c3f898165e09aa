package node

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

func ptr[T any](v T) *T { return &v }

func nodeUser(name string) *user.Info {
	return &user.Info{Name: "system:node:" + name, Groups: []string{"system:nodes", "system:authenticated"}}
}

// testGraph: pod ns1/p1 on n1 references secrets (volume, env, image pull,
// projected, CSI), configmaps, claim c1 (bound to pv1, which names
// secret ns2/pvsecret), an ephemeral claim, service account sa1 and a
// resource claim; pod ns1/p2 on n2 references secret other. Attachment
// va1 and slice rs1 are n1's.
func testGraph() *Graph {
	g := NewGraph()
	g.SetPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "p1"}, Spec: corev1.PodSpec{
		NodeName: "n1", ServiceAccountName: "sa1",
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
		InitContainers: []corev1.Container{{Env: []corev1.EnvVar{{ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "initenv"}}}}}}},
		Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cmenv"}}}}}},
		Volumes: []corev1.Volume{
			{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s1"}}},
			{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projs"}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projcm"}}}}}}},
			{Name: "csi", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "csis"}}}},
			{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c1"}}},
			{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		},
		ResourceClaims: []corev1.PodResourceClaim{{Name: "x", ResourceClaimName: ptr("rc1")}},
	}, Status: corev1.PodStatus{ResourceClaimStatuses: []corev1.PodResourceClaimStatus{{Name: "y", ResourceClaimName: ptr("rc-gen")}}}})
	g.SetPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "p2"}, Spec: corev1.PodSpec{
		NodeName: "n2", Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "other"}}}}}})
	g.SetPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "unbound"}, Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "unbound"}}}}}})
	g.SetPersistentVolume(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "ns1", Name: "c1"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d",
			NodeStageSecretRef: &corev1.SecretReference{Namespace: "ns2", Name: "pvsecret"}}}}})
	g.SetPersistentVolume(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv2"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "ns1", Name: "other"}}})
	g.SetVolumeAttachment(&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va1"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1"}})
	g.SetResourceSlice(&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "rs1"}, Spec: resourcev1.ResourceSliceSpec{NodeName: ptr("n1")}})
	return g
}

func res(verb, group, resource, sub, ns, name string) authorizer.Attributes {
	return authorizer.Attributes{User: nodeUser("n1"), Verb: verb, ResourceRequest: true, APIGroup: group,
		Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

// TestAuthorize: decisions and reasons as upstream's node_authorizer.go
// (kubernetes/kubernetes plugin/pkg/auth/authorizer/node, commit
// 00d03ec049aaa34f7d77b1bb86072e1b9a033177).
func TestAuthorize(t *testing.T) {
	z := New(testGraph())
	const noRel = "no relationship found between node 'n1' and this object"
	sel := func(a authorizer.Attributes, s string) authorizer.Attributes {
		a.FieldSelector = fields.ParseSelectorOrDie(s).Requirements()
		return a
	}
	for _, tc := range []struct {
		name   string
		a      authorizer.Attributes
		allow  bool
		reason string
	}{
		{"secret volume", res("get", "", "secrets", "", "ns1", "s1"), true, ""},
		{"secret list by name", res("list", "", "secrets", "", "ns1", "s1"), true, ""},
		{"secret watch by name", res("watch", "", "secrets", "", "ns1", "s1"), true, ""},
		{"image pull secret", res("get", "", "secrets", "", "ns1", "pull"), true, ""},
		{"init env secret", res("get", "", "secrets", "", "ns1", "initenv"), true, ""},
		{"projected secret", res("get", "", "secrets", "", "ns1", "projs"), true, ""},
		{"csi secret", res("get", "", "secrets", "", "ns1", "csis"), true, ""},
		{"pv secret", res("get", "", "secrets", "", "ns2", "pvsecret"), true, ""},
		{"secret of another node's pod", res("get", "", "secrets", "", "ns1", "other"), false, noRel},
		{"secret of an unbound pod", res("get", "", "secrets", "", "ns1", "unbound"), false, noRel},
		{"secret in another namespace", res("get", "", "secrets", "", "ns2", "s1"), false, noRel},
		{"secret list all", res("list", "", "secrets", "", "ns1", ""), false, "No Object name found"},
		{"secret update", res("update", "", "secrets", "", "ns1", "s1"), false, "can only read resources of this type"},
		{"secret cluster-wide", res("get", "", "secrets", "", "", "s1"), false, "can only read namespaced object of this type"},
		{"secret subresource", res("get", "", "secrets", "x", "ns1", "s1"), false, "cannot read subresource"},
		{"configmap envFrom", res("get", "", "configmaps", "", "ns1", "cmenv"), true, ""},
		{"configmap projected", res("get", "", "configmaps", "", "ns1", "projcm"), true, ""},
		{"configmap unrelated", res("get", "", "configmaps", "", "ns1", "kube-root-ca.crt"), false, noRel},
		{"pvc", res("get", "", "persistentvolumeclaims", "", "ns1", "c1"), true, ""},
		{"ephemeral pvc", res("get", "", "persistentvolumeclaims", "", "ns1", "p1-eph"), true, ""},
		{"pvc list", res("list", "", "persistentvolumeclaims", "", "ns1", "c1"), false, "can only get individual resources of this type"},
		{"pvc status", res("patch", "", "persistentvolumeclaims", "status", "ns1", "c1"), true, ""},
		{"pvc status get", res("get", "", "persistentvolumeclaims", "status", "ns1", "c1"), false, "can only get/update/patch this type"},
		{"pv", res("get", "", "persistentvolumes", "", "", "pv1"), true, ""},
		{"pv of another claim", res("get", "", "persistentvolumes", "", "", "pv2"), false, noRel},
		{"resource claim", res("get", "resource.k8s.io", "resourceclaims", "", "ns1", "rc1"), true, ""},
		{"generated resource claim", res("get", "resource.k8s.io", "resourceclaims", "", "ns1", "rc-gen"), true, ""},
		{"volume attachment", res("get", "storage.k8s.io", "volumeattachments", "", "", "va1"), true, ""},
		{"sa token", res("create", "", "serviceaccounts", "token", "ns1", "sa1"), true, ""},
		{"sa token unrelated", res("create", "", "serviceaccounts", "token", "ns1", "default"), false, noRel},
		{"sa get", res("get", "", "serviceaccounts", "", "ns1", "sa1"), false, "can only create tokens for individual service accounts"},
		{"sa other subresource", res("create", "", "serviceaccounts", "x", "ns1", "sa1"), false, "can only create token subresource of serviceaccount"},
		{"own lease", res("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n1"), true, ""},
		{"lease create", res("create", "coordination.k8s.io", "leases", "", "kube-node-lease", ""), true, ""},
		{"other lease", res("get", "coordination.k8s.io", "leases", "", "kube-node-lease", "n2"), false, "can only access node lease with the same name as the requesting node"},
		{"lease elsewhere", res("get", "coordination.k8s.io", "leases", "", "default", "n1"), false, `can only access leases in the "kube-node-lease" system namespace`},
		{"lease list", res("list", "coordination.k8s.io", "leases", "", "kube-node-lease", ""), false, "can only get, create, update, patch, or delete a node lease"},
		{"own csinode", res("get", "storage.k8s.io", "csinodes", "", "", "n1"), true, ""},
		{"other csinode", res("get", "storage.k8s.io", "csinodes", "", "", "n2"), false, "can only access CSINode with the same name as the requesting node"},
		{"own node", res("get", "", "nodes", "", "", "n1"), true, ""},
		{"other node", res("get", "", "nodes", "", "", "n2"), false, "node 'n1' cannot read 'n2', only its own Node object"},
		{"all nodes", res("list", "", "nodes", "", "", ""), false, "node 'n1' cannot read all nodes, only its own Node object"},
		{"node status", res("patch", "", "nodes", "status", "", "n2"), true, ""},
		{"node create", res("create", "", "nodes", "", "", ""), true, ""},
		{"node delete", res("delete", "", "nodes", "", "", "n1"), false, ""},
		{"own pod", res("get", "", "pods", "", "ns1", "p1"), true, ""},
		{"other pod", res("get", "", "pods", "", "ns1", "p2"), false, noRel},
		{"pods by node", sel(res("list", "", "pods", "", "", ""), "spec.nodeName=n1"), true, ""},
		{"pods by other node", sel(res("watch", "", "pods", "", "", ""), "spec.nodeName=n2"), false, "can only list/watch pods with spec.nodeName field selector"},
		{"all pods", res("list", "", "pods", "", "", ""), false, "can only list/watch pods with spec.nodeName field selector"},
		{"pod eviction", res("create", "", "pods", "eviction", "ns1", "p2"), true, ""},
		{"pod status", res("update", "", "pods", "status", "ns1", "p2"), true, ""},
		{"pod log", res("get", "", "pods", "log", "ns1", "p1"), false, ""},
		{"own slice", res("update", "resource.k8s.io", "resourceslices", "", "", "rs1"), true, ""},
		{"slices by node", sel(res("deletecollection", "resource.k8s.io", "resourceslices", "", "", ""), "spec.nodeName=n1"), true, ""},
		{"all slices", res("list", "resource.k8s.io", "resourceslices", "", "", ""), false, "can only list/watch/deletecollection resourceslices with nodeName field selector"},
		// The static node rules.
		{"services", res("list", "", "services", "", "", ""), true, ""},
		{"csr", res("create", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), true, ""},
		{"deployments", res("list", "apps", "deployments", "", "", ""), false, ""},
	} {
		d, reason, err := z.Authorize(context.Background(), tc.a)
		if err != nil || (d == authorizer.DecisionAllow) != tc.allow || reason != tc.reason {
			t.Errorf("%s: %v %q %v, want allow=%v %q", tc.name, d, reason, err, tc.allow, tc.reason)
		}
		if !tc.allow && d != authorizer.DecisionNoOpinion {
			t.Errorf("%s: decision %v, want no opinion", tc.name, d)
		}
	}
}

func TestAuthorizeNonNodes(t *testing.T) {
	z := New(testGraph())
	a := res("get", "", "secrets", "", "ns1", "s1")
	for _, u := range []*user.Info{
		{Name: "system:node:n1"},
		{Name: "alice", Groups: []string{"system:nodes"}},
		nil,
	} {
		a.User = u
		if d, reason, _ := z.Authorize(context.Background(), a); d != authorizer.DecisionNoOpinion || reason != "" {
			t.Errorf("%+v: %v %q, want no opinion", u, d, reason)
		}
	}
	a.User = &user.Info{Name: "system:node:", Groups: []string{"system:nodes"}}
	if d, reason, _ := z.Authorize(context.Background(), a); d != authorizer.DecisionNoOpinion || reason != `unknown node for user "system:node:"` {
		t.Errorf("unnamed node: %v %q", d, reason)
	}
	if _, _, inc, err := z.RulesFor(context.Background(), nodeUser("n1"), "ns1"); !inc || err == nil {
		t.Errorf("RulesFor a node: incomplete %v err %v, want incomplete with an error", inc, err)
	}
	if _, _, inc, err := z.RulesFor(context.Background(), &user.Info{Name: "alice"}, "ns1"); inc || err != nil {
		t.Errorf("RulesFor alice: %v %v", inc, err)
	}
}

// TestGraphUpdates: moving, deleting and rebinding objects changes what
// a node may read.
func TestGraphUpdates(t *testing.T) {
	g := testGraph()
	if !g.Related("n1", Secret, "ns1", "s1") {
		t.Fatal("s1 not related to n1")
	}
	g.SetPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "p1"}, Spec: corev1.PodSpec{NodeName: "n2",
		Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s1"}}}}}})
	if g.Related("n1", Secret, "ns1", "s1") || !g.Related("n2", Secret, "ns1", "s1") {
		t.Error("after moving p1 to n2, s1 must be n2's only")
	}
	if g.Related("n1", PersistentVolume, "", "pv1") {
		t.Error("pv1 still related to n1")
	}
	g.DeletePod("ns1", "p1")
	if g.Related("n2", Secret, "ns1", "s1") || g.Related("n2", Pod, "ns1", "p1") {
		t.Error("deleted pod still relates")
	}
	g.DeletePersistentVolume("pv2")
	g.SetPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "p3"}, Spec: corev1.PodSpec{NodeName: "n1",
		Volumes: []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "other"}}}}}})
	if g.Related("n1", PersistentVolume, "", "pv2") {
		t.Error("deleted pv2 still relates")
	}
	g.SetPersistentVolume(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv3"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "ns1", Name: "other"}}})
	if !g.Related("n1", PersistentVolume, "", "pv3") {
		t.Error("pv3 bound to claim other of p3 on n1 not related")
	}
	g.DeleteVolumeAttachment("va1")
	g.DeleteResourceSlice("rs1")
	if g.Related("n1", VolumeAttachment, "", "va1") || g.Related("n1", ResourceSlice, "", "rs1") {
		t.Error("deleted attachment or slice still relates")
	}
}
