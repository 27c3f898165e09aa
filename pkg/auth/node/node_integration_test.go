package node_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

// TestNodeAuthorizerAndRestriction starts a server as kubeadm configures
// kube-apiserver (--authorization-mode=Node,RBAC, NodeRestriction on) and
// acts as the kubelet of node n1 with a client certificate from the
// cluster CA (CN=system:node:n1, O=system:nodes), over real HTTPS.
func TestNodeAuthorizerAndRestriction(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithFlags("--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction"))
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(srv.Config)
	nodeCfg, err := srv.AddUser(kapitest.User{Name: "system:node:n1", Groups: []string{"system:nodes"}})
	if err != nil {
		t.Fatal(err)
	}
	kubelet := kubernetes.NewForConfigOrDie(nodeCfg)

	for _, n := range []string{"n1", "n2"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"s1", "s2"} {
		if _, err := admin.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the default service account", func() bool {
		_, err := admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1"}, Spec: corev1.PodSpec{
		NodeName:   "n1",
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		Volumes:    []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s1"}}}},
	}}
	if _, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The graph follows the pod through an informer: wait for it.
	waitFor(t, "n1 to read secret s1 of its pod", func() bool {
		_, err := kubelet.CoreV1().Secrets("default").Get(ctx, "s1", metav1.GetOptions{})
		return err == nil
	})
	// Upstream's message: the filter's forbidden format with the Node
	// authorizer's reason (RBAC, second, has none for this user).
	_, err = kubelet.CoreV1().Secrets("default").Get(ctx, "s2", metav1.GetOptions{})
	wantForbidden(t, err, `secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object`)

	if _, err := kubelet.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}); err != nil {
		t.Errorf("list pods of n1: %v", err)
	}
	_, err = kubelet.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	wantForbidden(t, err, `pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector`)
	_, err = kubelet.CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{})
	wantForbidden(t, err, `nodes "n2" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the cluster scope: node 'n1' cannot read 'n2', only its own Node object`)

	// NodeRestriction.
	patch := func(name, labels string) error {
		_, err := kubelet.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":`+labels+`}}`), metav1.PatchOptions{})
		return err
	}
	if err := patch("n1", `{"kubernetes.io/hostname":"n1","example.com/team":"a"}`); err != nil {
		t.Errorf("n1 labels itself: %v", err)
	}
	wantForbidden(t, patch("n1", `{"node-restriction.kubernetes.io/pool":"secure"}`),
		`nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool`)
	wantForbidden(t, patch("n2", `{"a":"b"}`), `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`)
	_, err = kubelet.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2"}, Spec: corev1.PodSpec{
		NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	wantForbidden(t, err, `pods "p2" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`)
	st, err := admin.CoreV1().Pods("default").Get(ctx, "p1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st.Status.Message = "running"
	if _, err := kubelet.CoreV1().Pods("default").UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
		t.Errorf("n1 updates the status of its pod: %v", err)
	}

	// Moving the pod away (delete and re-create on n2) takes s1 away.
	if err := admin.CoreV1().Pods("default").Delete(ctx, "p1", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to lose secret s1", func() bool {
		_, err := kubelet.CoreV1().Secrets("default").Get(ctx, "s1", metav1.GetOptions{})
		return apierrors.IsForbidden(err)
	})

	// kubectl 1.33 auth can-i, impersonating the node (the admin is in
	// system:masters): answered by the Node authorizer through a
	// SelfSubjectAccessReview.
	kubectl := "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"
	if _, err := os.Stat(kubectl); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true", kubectl)
		}
		t.Skipf("%s not installed: kubectl part not run", kubectl)
	}
	pod.ResourceVersion = ""
	if _, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ args, want string }{
		{"get secret/s1", "yes"},
		// kubectl prints the reason of a denial after "no - ".
		{"get secret/s2", "no - no relationship found between node 'n1' and this object"},
		{"get node/n1", "yes"},
		{"list nodes", "no - node 'n1' cannot read all nodes, only its own Node object"},
		{"list services", "yes"},
	} {
		var out string
		ok := false
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			args := append([]string{"--kubeconfig", srv.Kubeconfig, "auth", "can-i", "--as=system:node:n1", "--as-group=system:nodes", "-n", "default"}, strings.Fields(tc.args)...)
			b, _ := exec.CommandContext(ctx, kubectl, args...).Output()
			if out = strings.TrimSpace(string(b)); out == tc.want {
				ok = true
				break
			}
		}
		if !ok {
			t.Errorf("kubectl auth can-i %s: %q, want %q", tc.args, out, tc.want)
		}
	}
}

func wantForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || err.Error() != msg {
		t.Errorf("got %v\nwant Forbidden %q", err, msg)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	testwait.Until(t, 20*time.Second, 50*time.Millisecond, what, ok)
}

// TestAssociatedNodeImpersonation: a node agent (a service account whose
// token is bound to its pod on n1) impersonates its node with constrained
// impersonation (impersonate:associated-node and
// impersonate-on:associated-node:get), and then reads as the node what
// the Node authorizer lets n1 read, and nothing else.
func TestAssociatedNodeImpersonation(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithFlags("--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction"))
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(srv.Config)
	for _, n := range []string{"n1", "n2"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "agent"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name, node, sa string) *corev1.Pod {
		p, err := admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			NodeName: node, ServiceAccountName: sa, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	agentPod := pod("agent-x", "n1", "agent")
	waitFor(t, "the default service account", func() bool {
		_, err := admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	pod("other", "n2", "default")
	_, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "impersonate-my-node"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"nodes"}, Verbs: []string{"impersonate:associated-node"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"impersonate-on:associated-node:get"}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "agent-impersonates-node"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonate-my-node"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: "agent"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "agent", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: agentPod.Name, UID: agentPod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	as := func(node string) kubernetes.Interface {
		cfg := rest.AnonymousClientConfig(srv.Config)
		cfg.BearerToken = tr.Status.Token
		cfg.Impersonate.UserName = "system:node:" + node
		return kubernetes.NewForConfigOrDie(cfg)
	}
	waitFor(t, "the agent to read its own pod as n1", func() bool {
		_, err := as("n1").CoreV1().Pods("default").Get(ctx, "agent-x", metav1.GetOptions{})
		return err == nil
	})
	_, err = as("n1").CoreV1().Pods("default").Get(ctx, "other", metav1.GetOptions{})
	wantForbidden(t, err, `pods "other" is forbidden: User "system:node:n1" cannot get resource "pods" in API group "" in the namespace "default": no relationship found between node 'n1' and this object`)
	_, err = as("n1").CoreV1().Pods("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	wantForbidden(t, err, `pods is forbidden: User "system:serviceaccount:default:agent" cannot impersonate-on:associated-node:list resource "pods" in API group "" in the namespace "default"`)
	_, err = as("n2").CoreV1().Pods("default").Get(ctx, "other", metav1.GetOptions{})
	wantForbidden(t, err, `pods "other" is forbidden: User "system:serviceaccount:default:agent" cannot impersonate-on:arbitrary-node:get resource "pods" in API group "" in the namespace "default"`)
}
