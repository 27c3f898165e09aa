package noderestriction

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

type getter map[string]runtime.Object

func (g getter) Get(_ context.Context, ns, name string) (runtime.Object, error) {
	if o, ok := g[ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

func ptr[T any](v T) *T { return &v }

var n1 = &user.Info{Name: "system:node:n1", Groups: []string{"system:nodes"}}

func pod(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}, Spec: corev1.PodSpec{NodeName: node}}
}

func mirror(mut func(*corev1.Pod)) *corev1.Pod {
	p := pod("m", "n1")
	p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n1", UID: "node-uid", Controller: ptr(true)}}
	if mut != nil {
		mut(p)
	}
	return p
}

func csrFor(t *testing.T, cn string) []byte {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func attrs(op admission.Operation, group, resource, sub, ns, name string, obj, old runtime.Object) admission.Attributes {
	return admission.Attributes{Operation: op, Resource: schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource},
		Subresource: sub, Namespace: ns, Name: name, Object: obj, OldObject: old, User: n1}
}

// TestAdmit: messages as upstream's plugin/pkg/admission/noderestriction/
// admission.go (kubernetes/kubernetes commit
// aab56e9b70b7d80f2a5a5f2907e172de257662b5).
func TestAdmit(t *testing.T) {
	pods := getter{"ns/mine": pod("mine", "n1"), "ns/theirs": pod("theirs", "n2")}
	nodes := getter{"/n1": &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}}
	p := New(pods, nodes)
	node := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	pvc := func(phase corev1.PersistentVolumeClaimPhase, capacity string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"},
			Status: corev1.PersistentVolumeClaimStatus{Phase: phase, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}}}
	}
	token := func(ref *authenticationv1.BoundObjectReference) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref}}
	}
	podRef := func(name, uid string) *authenticationv1.BoundObjectReference {
		return &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: name, UID: types.UID(uid)}
	}
	for _, tc := range []struct {
		name string
		a    admission.Attributes
		want string // "" allowed; else a substring of the Forbidden message
	}{
		{"mirror pod", attrs(admission.Create, "", "pods", "", "ns", "", mirror(nil), nil), ""},
		{"not a mirror pod", attrs(admission.Create, "", "pods", "", "ns", "", pod("x", "n1"), nil),
			`pods "x" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`},
		{"mirror pod elsewhere", attrs(admission.Create, "", "pods", "", "ns", "", mirror(func(p *corev1.Pod) { p.Spec.NodeName = "n2" }), nil),
			`node "n1" can only create pods with spec.nodeName set to itself`},
		{"mirror pod without owner", attrs(admission.Create, "", "pods", "", "ns", "", mirror(func(p *corev1.Pod) { p.OwnerReferences = nil }), nil),
			`node "n1" can only create pods with an owner reference set to itself`},
		{"mirror pod not controller", attrs(admission.Create, "", "pods", "", "ns", "", mirror(func(p *corev1.Pod) { p.OwnerReferences[0].Controller = nil }), nil),
			`node "n1" can only create pods with a controller owner reference set to itself`},
		{"mirror pod wrong uid", attrs(admission.Create, "", "pods", "", "ns", "", mirror(func(p *corev1.Pod) { p.OwnerReferences[0].UID = "u2" }), nil),
			`node n1 UID mismatch: expected u2 got node-uid`},
		{"mirror pod with secret", attrs(admission.Create, "", "pods", "", "ns", "", mirror(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}
		}), nil), `node "n1" can not create pods that reference secrets`},
		{"mirror pod with sa", attrs(admission.Create, "", "pods", "", "ns", "", mirror(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "default" }), nil),
			`node "n1" can not create pods that reference a service account`},
		{"mirror pod with pvc", attrs(admission.Create, "", "pods", "", "ns", "", mirror(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
		}), nil), `node "n1" can not create pods that reference persistentvolumeclaims`},
		{"delete own pod", attrs(admission.Delete, "", "pods", "", "ns", "mine", nil, nil), ""},
		{"delete other pod", attrs(admission.Delete, "", "pods", "", "ns", "theirs", nil, nil), `node "n1" can only delete pods with spec.nodeName set to itself`},
		{"delete missing pod", attrs(admission.Delete, "", "pods", "", "ns", "gone", nil, nil), `pods "gone" not found`},
		{"update pod", attrs(admission.Update, "", "pods", "", "ns", "mine", pod("mine", "n1"), pod("mine", "n1")), `unexpected operation "UPDATE", node "n1" can only create and delete mirror pods`},
		{"own pod status", attrs(admission.Update, "", "pods", "status", "ns", "mine", pod("mine", "n1"), pod("mine", "n1")), ""},
		{"other pod status", attrs(admission.Update, "", "pods", "status", "ns", "theirs", pod("theirs", "n2"), pod("theirs", "n2")),
			`node "n1" can only update pod status for pods with spec.nodeName set to itself`},
		{"labels through status", attrs(admission.Update, "", "pods", "status", "ns", "mine", func() *corev1.Pod { p := pod("mine", "n1"); p.Labels = map[string]string{"a": "b"}; return p }(), pod("mine", "n1")),
			`node "n1" cannot update labels through pod status`},
		{"pod binding", attrs(admission.Create, "", "pods", "binding", "ns", "mine", nil, nil), `unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`},
		{"evict own", attrs(admission.Create, "", "pods", "eviction", "ns", "mine", &policyv1.Eviction{}, nil), ""},
		{"evict other", attrs(admission.Create, "", "pods", "eviction", "ns", "theirs", &policyv1.Eviction{}, nil), `node n1 can only evict pods with spec.nodeName set to itself`},
		{"own node labels", attrs(admission.Create, "", "nodes", "", "", "n1", node(map[string]string{"kubernetes.io/hostname": "n1", "node.kubernetes.io/x": "y", "example.com/z": "1"}), nil), ""},
		{"other node", attrs(admission.Update, "", "nodes", "", "", "n2", node(nil), node(nil)), `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`},
		{"restricted label on create", attrs(admission.Create, "", "nodes", "", "", "n1", node(map[string]string{"node-restriction.kubernetes.io/a": "1", "foo.kubernetes.io/b": "2"}), nil),
			`node "n1" is not allowed to set the following labels: foo.kubernetes.io/b, node-restriction.kubernetes.io/a`},
		{"restricted label on update", attrs(admission.Update, "", "nodes", "status", "", "n1", node(map[string]string{"x.node-restriction.kubernetes.io/a": "1"}), node(nil)),
			`is not allowed to modify labels: x.node-restriction.kubernetes.io/a`},
		{"taints", attrs(admission.Update, "", "nodes", "", "", "n1", node(nil), node(nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule})),
			`node "n1" is not allowed to modify taints`},
		{"pvc status capacity", attrs(admission.Update, "", "persistentvolumeclaims", "status", "ns", "c", pvc(corev1.ClaimBound, "2Gi"), pvc(corev1.ClaimBound, "1Gi")), ""},
		{"pvc status phase", attrs(admission.Update, "", "persistentvolumeclaims", "status", "ns", "c", pvc(corev1.ClaimLost, "1Gi"), pvc(corev1.ClaimBound, "1Gi")),
			`node "n1" is not allowed to update fields other than status.quantity and status.conditions`},
		{"pvc spec", attrs(admission.Update, "", "persistentvolumeclaims", "", "ns", "c", pvc(corev1.ClaimBound, "1Gi"), pvc(corev1.ClaimBound, "1Gi")), `may only update PVC status`},
		{"token for own pod", attrs(admission.Create, "", "serviceaccounts", "token", "ns", "default", token(podRef("mine", "uid-mine")), nil), ""},
		{"token unbound", attrs(admission.Create, "", "serviceaccounts", "token", "ns", "default", token(nil), nil), `node requested token not bound to a pod`},
		{"token without uid", attrs(admission.Create, "", "serviceaccounts", "token", "ns", "default", token(podRef("mine", "")), nil), `node requested token with a pod binding without a uid`},
		{"token stale uid", attrs(admission.Create, "", "serviceaccounts", "token", "ns", "default", token(podRef("mine", "old")), nil),
			`the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated`},
		{"token other node's pod", attrs(admission.Create, "", "serviceaccounts", "token", "ns", "default", token(podRef("theirs", "uid-theirs")), nil),
			`node requested token bound to a pod scheduled on a different node`},
		{"own lease", attrs(admission.Create, "coordination.k8s.io", "leases", "", "kube-node-lease", "", &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, nil), ""},
		{"other lease", attrs(admission.Create, "coordination.k8s.io", "leases", "", "kube-node-lease", "", &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, nil),
			`can only access node lease with the same name as the requesting node`},
		{"lease elsewhere", attrs(admission.Update, "coordination.k8s.io", "leases", "", "default", "n1", nil, nil), `can only access leases in the "kube-node-lease" system namespace`},
		{"slice of other node", attrs(admission.Create, "resource.k8s.io", "resourceslices", "", "", "", &resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{NodeName: ptr("n2")}}, nil),
			`can only create ResourceSlice with the same NodeName as the requesting node`},
		{"own csr", attrs(admission.Create, "certificates.k8s.io", "certificatesigningrequests", "", "", "", &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: certificatesv1.KubeletServingSignerName, Request: csrFor(t, "system:node:n1")}}, nil), ""},
		{"csr for other node", attrs(admission.Create, "certificates.k8s.io", "certificatesigningrequests", "", "", "", &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName, Request: csrFor(t, "system:node:n2")}}, nil), `can only create a node CSR with CN=system:node:n1`},
		{"configmaps untouched", attrs(admission.Create, "", "configmaps", "", "ns", "", &corev1.ConfigMap{}, nil), ""},
	} {
		err := p.Admit(context.Background(), tc.a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		case tc.want != "" && !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err):
			t.Errorf("%s: %v is not a Forbidden status", tc.name, err)
		}
	}
}

func TestNotNodes(t *testing.T) {
	p := New(getter{}, getter{})
	a := attrs(admission.Update, "", "nodes", "", "", "n2", &corev1.Node{}, &corev1.Node{})
	for _, u := range []*user.Info{{Name: "alice"}, {Name: "system:node:n1"}, {Name: "alice", Groups: []string{"system:nodes"}}} {
		a.User = u
		if err := p.Admit(context.Background(), a); err != nil {
			t.Errorf("%+v: %v", u, err)
		}
	}
	a.User = &user.Info{Name: "system:node:", Groups: []string{"system:nodes"}}
	if err := p.Admit(context.Background(), a); err == nil || !strings.Contains(err.Error(), `could not determine node from user "system:node:"`) {
		t.Errorf("unnamed node: %v", err)
	}
}

func TestValidateSliceDelete(t *testing.T) {
	p := New(getter{}, getter{})
	slice := func(node string) *resourcev1.ResourceSlice {
		return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{NodeName: ptr(node)}}
	}
	if err := p.Validate(context.Background(), attrs(admission.Delete, "resource.k8s.io", "resourceslices", "", "", "s", nil, slice("n1"))); err != nil {
		t.Errorf("own slice: %v", err)
	}
	err := p.Validate(context.Background(), attrs(admission.Delete, "resource.k8s.io", "resourceslices", "", "", "s", nil, slice("n2")))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "can only delete ResourceSlice with the same NodeName as the requesting node") {
		t.Errorf("other slice: %v", err)
	}
}
