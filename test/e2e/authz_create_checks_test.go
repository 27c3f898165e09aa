package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestHandlersAuthorizeCreates: requests the filter authorizes as one
// verb but that create an object need the create verb too, as in
// kube-apiserver v1.37.2: a server-side apply or a PUT that creates
// (k8s.io/apiserver endpoints/handlers withAuthorization), and a GET of
// pods/exec or pods/portforward (a websocket upgrade;
// AuthorizePodWebsocketUpgradeCreatePermission, on since v1.35). The
// expected answers are the reference's: kube-apiserver v1.37.2 with
// --authorization-mode=RBAC and the same roles answered these bodies
// (2026-11-27); a role escalation is refused with the rules' message.
func TestHandlersAuthorizeCreates(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(srv.Config)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := func(name string, rules ...rbacv1.PolicyRule) {
		if _, err := admin.RbacV1().Roles("t1").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.RbacV1().RoleBindings("t1").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "dave"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	role("pr", rbacv1.PolicyRule{APIGroups: []string{"", "coordination.k8s.io"}, Resources: []string{"configmaps", "leases"}, Verbs: []string{"get", "patch", "update"}})
	role("ex", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "pods/exec", "pods/attach", "pods/portforward"}, Verbs: []string{"get"}})
	role("rr", rbacv1.PolicyRule{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}, Verbs: []string{"create", "update"}})
	if _, err := admin.CoreV1().ConfigMaps("t1").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "exists"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Pods("t1").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	do := userRequester(t, srv, "dave")
	// Wait until RBAC's informers hold all three of dave's roles and
	// bindings (roles and bindings are separate informers: seeing one
	// grant in effect says nothing of the others).
	for _, ra := range []authorizationv1.ResourceAttributes{
		{Namespace: "t1", Verb: "get", Version: "v1", Resource: "configmaps"},
		{Namespace: "t1", Verb: "get", Version: "v1", Resource: "pods", Subresource: "exec"},
		{Namespace: "t1", Verb: "create", Group: rbacv1.GroupName, Version: "v1", Resource: "roles"},
	} {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: "dave", ResourceAttributes: &ra}}, metav1.CreateOptions{})
			if err == nil && r.Status.Allowed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("dave still not allowed %+v: %v %+v", ra, err, r)
			}
		}
	}
	for _, c := range []struct {
		name, method, path, contentType, body string
		code                                  int
		message                               string // "" for a success
	}{
		{"apply creates", "PATCH", "/api/v1/namespaces/t1/configmaps/c5?fieldManager=x", "application/apply-patch+yaml",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c5"}}`, 403,
			`configmaps \"c5\" is forbidden: User \"dave\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"t1\"`},
		{"apply updates", "PATCH", "/api/v1/namespaces/t1/configmaps/exists?fieldManager=x", "application/apply-patch+yaml",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"exists"},"data":{"a":"b"}}`, 200, ""},
		{"put creates a lease", "PUT", "/apis/coordination.k8s.io/v1/namespaces/t1/leases/l1", "application/json",
			`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l1","namespace":"t1"}}`, 403,
			`leases.coordination.k8s.io \"l1\" is forbidden: User \"dave\" cannot create resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"t1\"`},
		{"exec by GET", "GET", "/api/v1/namespaces/t1/pods/p1/exec?command=true&stdout=1", "", "", 403, `pods \"p1\" is forbidden: "`},
		{"portforward by GET", "GET", "/api/v1/namespaces/t1/pods/p1/portforward?ports=80", "", "", 403, `pods \"p1\" is forbidden: "`},
		{"attach by GET", "GET", "/api/v1/namespaces/t1/pods/p1/attach?stdout=1", "", "", 403, `pods \"p1\" is forbidden: "`},
		{"role escalation", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/t1/roles", "application/json",
			`{"metadata":{"name":"big"},"rules":[{"apiGroups":[""],"resources":["*"],"verbs":["*"]}]}`, 403,
			`roles.rbac.authorization.k8s.io \"big\" is forbidden: user \"dave\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"*\"], Verbs:[\"*\"]}`},
	} {
		code, body := do(c.method, c.path, c.contentType, c.body)
		if code != c.code || c.message != "" && !strings.Contains(body, `"message":"`+c.message) {
			t.Errorf("%s: got %d %s, want %d with message %s", c.name, code, body, c.code, c.message)
		}
	}
}
