package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/kapitest"
)

// TestRBACConstrainedImpersonation: RBAC roles with the constrained
// impersonation verbs (KEP-5284, on by default since v1.36) grant exactly
// what they say. The refusals, the mode tried first after a success and
// the audit events are kube-apiserver v1.37.2's, recorded against the
// reference with --authorization-mode=Node,RBAC and a Metadata audit
// policy (the namespace there was "default").
func TestRBACConstrainedImpersonation(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	srv := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) {
		o.AuditLogPath = auditPath
		o.Flags = append(o.Flags, "--audit-policy-file="+testaudit.MetadataPolicy(t))
	}))
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(srv.Config)
	const ns = "imp"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	grant := func(name string, rules []rbacv1.PolicyRule, subject rbacv1.Subject) {
		t.Helper()
		if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: []rbacv1.Subject{subject}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	user := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: name}
	}
	// alice may impersonate any user and group, for lists of pods only.
	grant("ui-list", []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"users", "groups"}, Verbs: []string{"impersonate:user-info"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"impersonate-on:user-info:list"}},
	}, user("alice"))
	// bob may impersonate dave, the legacy way.
	grant("legacy-dave", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"dave"}, Verbs: []string{"impersonate"}}}, user("bob"))
	// Whoever is impersonated may read pods.
	grant("pods-reader", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
		rbacv1.Subject{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "system:authenticated"})

	// RBAC sees new bindings a moment later (as upstream's informers):
	// wait until each grant is in effect, asking with SubjectAccessReviews
	// (not impersonated requests, which would teach the tracker a mode).
	for _, sar := range []authorizationv1.SubjectAccessReviewSpec{
		{User: "alice", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "impersonate-on:user-info:list", Version: "v1", Resource: "pods", Namespace: ns}},
		{User: "alice", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "impersonate:user-info", Group: "authentication.k8s.io", Version: "v1", Resource: "groups", Name: "g1"}},
		{User: "bob", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "impersonate", Version: "v1", Resource: "users", Name: "dave"}},
		{User: "dave", Groups: []string{"system:authenticated"}, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Version: "v1", Resource: "pods", Namespace: ns}},
	} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: sar}, metav1.CreateOptions{})
			if err == nil && r.Status.Allowed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("grant %+v not in effect: %v %+v", sar.ResourceAttributes, err, r)
			}
		}
	}

	as := func(requestor string, imp rest.ImpersonationConfig) *kubernetes.Clientset {
		t.Helper()
		cfg, err := clientcmd.BuildConfigFromFlags("", userKubeconfig(t, srv, requestor))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Impersonate = imp
		return kubernetes.NewForConfigOrDie(cfg)
	}
	wantErr := func(what string, err error, want string) {
		t.Helper()
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", what, err, want)
		}
	}

	aliceAsBob := as("alice", rest.ImpersonationConfig{UserName: "bob", Groups: []string{"g1"}})
	if _, err := aliceAsBob.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("alice listing pods as bob: %v", err)
	}
	_, err := aliceAsBob.CoreV1().Pods(ns).Get(ctx, "x", metav1.GetOptions{})
	wantErr("alice getting a pod as bob", err, `pods "x" is forbidden: User "alice" cannot impersonate-on:user-info:get resource "pods" in API group "" in the namespace "`+ns+`"`)
	_, err = aliceAsBob.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	wantErr("alice listing configmaps as bob", err, `configmaps is forbidden: User "alice" cannot impersonate-on:user-info:list resource "configmaps" in API group "" in the namespace "`+ns+`"`)
	_, err = as("alice", rest.ImpersonationConfig{UserName: "frank", Groups: []string{"system:masters"}}).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	wantErr("alice as system:masters", err, `groups.authentication.k8s.io "system:masters" is forbidden: User "alice" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the system:masters group is not allowed`)
	_, err = as("alice", rest.ImpersonationConfig{UserName: "frank", Extra: map[string][]string{"foo": {"v"}}}).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	wantErr("alice with an unprefixed extra", err, `userextras.authentication.k8s.io is forbidden: User "alice" cannot impersonate:user-info resource "userextras" in API group "authentication.k8s.io" at the cluster scope: impersonating an invalid key in extra is not allowed: extra.key: Invalid value: "foo": must be a domain-prefixed path (such as "acme.io/foo")`)

	// bob: refused by the user-info mode first; once the legacy mode has
	// allowed him, it is tried first and its refusal is the one he sees.
	bobAsFrank := as("bob", rest.ImpersonationConfig{UserName: "frank"})
	_, err = bobAsFrank.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	wantErr("bob as frank", err, `pods is forbidden: User "bob" cannot impersonate-on:user-info:list resource "pods" in API group "" in the namespace "`+ns+`"`)
	if _, err := as("bob", rest.ImpersonationConfig{UserName: "dave"}).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("bob as dave: %v", err)
	}
	_, err = bobAsFrank.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	wantErr("bob as frank after dave", err, `users "frank" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope`)

	// Audit: the constrained mode's verb for alice's list as bob, none for
	// bob's legacy impersonation of dave, no authorization annotations on
	// a refused impersonation.
	type event struct {
		Stage            string `json:"stage"`
		User             struct{ Username string }
		ImpersonatedUser *struct {
			Username string   `json:"username"`
			Groups   []string `json:"groups"`
		} `json:"impersonatedUser"`
		AuthenticationMetadata *struct {
			ImpersonationConstraint string `json:"impersonationConstraint"`
		} `json:"authenticationMetadata"`
		ResponseStatus struct{ Code int } `json:"responseStatus"`
		Annotations    map[string]string  `json:"annotations"`
	}
	var sawBob, sawDave, sawRefusal bool
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !(sawBob && sawDave && sawRefusal); time.Sleep(100 * time.Millisecond) {
		sawBob, sawDave, sawRefusal = false, false, false
		f, err := os.Open(auditPath)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev event
			if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" {
				continue
			}
			switch {
			case ev.User.Username == "alice" && ev.ImpersonatedUser != nil && ev.ImpersonatedUser.Username == "bob" && ev.ResponseStatus.Code == 200:
				sawBob = true
				if ev.AuthenticationMetadata == nil || ev.AuthenticationMetadata.ImpersonationConstraint != "impersonate:user-info" {
					t.Errorf("alice as bob: authenticationMetadata %+v, want impersonationConstraint impersonate:user-info", ev.AuthenticationMetadata)
				}
			case ev.User.Username == "bob" && ev.ImpersonatedUser != nil && ev.ImpersonatedUser.Username == "dave":
				sawDave = true
				if ev.AuthenticationMetadata != nil {
					t.Errorf("bob as dave (legacy): authenticationMetadata %+v, want none", ev.AuthenticationMetadata)
				}
			case ev.User.Username == "bob" && ev.ResponseStatus.Code == 403:
				sawRefusal = true
				if ev.ImpersonatedUser != nil || len(ev.Annotations) != 0 {
					t.Errorf("bob refused: impersonatedUser %+v annotations %v, want neither", ev.ImpersonatedUser, ev.Annotations)
				}
			}
		}
		f.Close()
	}
	if !sawBob || !sawDave || !sawRefusal {
		t.Errorf("audit events missing: alice as bob %v, bob as dave %v, bob refused %v", sawBob, sawDave, sawRefusal)
	}
}
