package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbac "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestUnsafeDeleteAuthorization: a DELETE with
// ignoreStoreReadErrorWithClusterBreakingPotential (AllowUnsafeMalformedObjectDeletion,
// beta and on by default in kube-apiserver v1.37) needs the verb
// unsafe-delete-ignore-read-errors besides delete, and deletes only an
// object that cannot be read. The answers are the reference's:
// kube-apiserver v1.37.2 with --authorization-mode=RBAC, a user allowed
// get and delete on configmaps, then also the unsafe verb (2026-11-28).
// The conflict names the storage key: etcd's under the server's
// --etcd-prefix there, the key itself on this (memory) server.
func TestUnsafeDeleteAuthorization(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(srv.Config)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ConfigMaps("t1").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := func(name string, verbs ...string) {
		t.Helper()
		if _, err := admin.RbacV1().Roles("t1").Create(ctx, &rbac.Role{ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbac.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.RbacV1().RoleBindings("t1").Create(ctx, &rbac.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbac.RoleRef{APIGroup: rbac.GroupName, Kind: "Role", Name: name},
			Subjects: []rbac.Subject{{Kind: "User", APIGroup: rbac.GroupName, Name: "erin"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind("cmdel", "get", "delete")
	do := userRequester(t, srv, "erin")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := do("GET", "/api/v1/namespaces/t1/configmaps/c1", "", ""); code == http.StatusOK {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("erin cannot get configmaps: %d", code)
		}
	}
	const unsafe = `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`
	code, body := do("DELETE", "/api/v1/namespaces/t1/configmaps/c1", "application/json", unsafe)
	if want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"c1\" is forbidden: not permitted to do \"unsafe-delete-ignore-read-errors\", reason: ","reason":"Forbidden","details":{"name":"c1","kind":"configmaps"},"code":403}`; code != http.StatusForbidden || strings.TrimSpace(body) != want {
		t.Errorf("without the unsafe verb: got %d %s, want 403 %s", code, body, want)
	}

	bind("cmunsafe", "unsafe-delete-ignore-read-errors")
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \"c1\": StorageError: invalid object, Code: 4, Key: /configmaps/t1/c1, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage","reason":"Conflict","details":{"name":"c1","kind":"configmaps"},"code":409}`
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, body = do("DELETE", "/api/v1/namespaces/t1/configmaps/c1", "application/json", unsafe)
		if code != http.StatusForbidden || time.Now().After(deadline) {
			break
		}
	}
	if code != http.StatusConflict || strings.TrimSpace(body) != want {
		t.Errorf("a readable object: got %d %s, want 409 %s", code, body, want)
	}
	code, body = do("DELETE", "/api/v1/namespaces/t1/configmaps/zz", "application/json", unsafe)
	if want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"zz\" not found","reason":"NotFound","details":{"name":"zz","kind":"configmaps"},"code":404}`; code != http.StatusNotFound || strings.TrimSpace(body) != want {
		t.Errorf("a missing object: got %d %s, want 404 %s", code, body, want)
	}
	if _, err := admin.CoreV1().ConfigMaps("t1").Get(ctx, "c1", metav1.GetOptions{}); err != nil {
		t.Errorf("c1 after the refused unsafe deletes: %v", err)
	}

	// Which resources offer it, as the reference (an unsafe dry-run DELETE
	// of a missing object of every deletable resource, 2026-11-28): its
	// namespaces and policy-based RBAC storages have no corrupt-object
	// deleter (500); the others, services and events.k8s.io included,
	// look the object up (404).
	adminDo := func(path string) (int, string) {
		t.Helper()
		res := admin.CoreV1().RESTClient().Delete().AbsPath(path).
			Body([]byte(`{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"dryRun":["All"]}`)).SetHeader("Content-Type", "application/json").Do(ctx)
		var code int
		res.StatusCode(&code)
		raw, _ := res.Raw()
		return code, string(raw)
	}
	noDeleter := `"message":"Internal error occurred: no unsafe deleter provided, can not honor ignoreStoreReadErrorWithClusterBreakingPotential"`
	for _, c := range []struct {
		path string
		code int
		has  string
	}{
		{"/api/v1/namespaces/zz", 500, noDeleter},
		{"/apis/rbac.authorization.k8s.io/v1/clusterroles/zz", 500, noDeleter},
		{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/zz", 500, noDeleter},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/t1/roles/zz", 500, noDeleter},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/t1/rolebindings/zz", 500, noDeleter},
		{"/api/v1/namespaces/t1/services/zz", 404, `"message":"services \"zz\" not found"`},
		{"/apis/events.k8s.io/v1/namespaces/t1/events/zz", 404, `"message":"events.events.k8s.io \"zz\" not found"`},
		{"/api/v1/namespaces/t1/pods/zz", 404, `"message":"pods \"zz\" not found"`},
	} {
		if code, body := adminDo(c.path); code != c.code || !strings.Contains(body, c.has) {
			t.Errorf("%s: got %d %s, want %d with %s", c.path, code, body, c.code, c.has)
		}
	}
}
