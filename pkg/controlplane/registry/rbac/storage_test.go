package rbac

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer/union"
	rbacauth "github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// lister reads the objects of the stores under test.
type lister struct {
	ctx                                            context.Context
	roles, clusterRoles, bindings, clusterBindings rest.Storage
}

func (l *lister) GetRole(ns, name string) (*rbacv1.Role, error) {
	obj, err := l.roles.(rest.Getter).Get(request.WithNamespace(l.ctx, ns), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.Role), nil
}

func (l *lister) GetClusterRole(name string) (*rbacv1.ClusterRole, error) {
	obj, err := l.clusterRoles.(rest.Getter).Get(request.WithNamespace(l.ctx, ""), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.ClusterRole), nil
}

func (l *lister) ListRoleBindings(ns string) ([]*rbacv1.RoleBinding, error) {
	obj, err := l.bindings.(rest.Lister).List(request.WithNamespace(l.ctx, ns), nil)
	if err != nil {
		return nil, err
	}
	var out []*rbacv1.RoleBinding
	for i := range obj.(*rbacv1.RoleBindingList).Items {
		out = append(out, &obj.(*rbacv1.RoleBindingList).Items[i])
	}
	return out, nil
}

func (l *lister) ListClusterRoleBindings() ([]*rbacv1.ClusterRoleBinding, error) {
	obj, err := l.clusterBindings.(rest.Lister).List(request.WithNamespace(l.ctx, ""), nil)
	if err != nil {
		return nil, err
	}
	var out []*rbacv1.ClusterRoleBinding
	for i := range obj.(*rbacv1.ClusterRoleBindingList).Items {
		out = append(out, &obj.(*rbacv1.ClusterRoleBindingList).Items[i])
	}
	return out, nil
}

func rule(verbs, group, resource string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: strings.Fields(verbs), APIGroups: []string{group}, Resources: []string{resource}}
}

func TestValidationAndEscalation(t *testing.T) {
	rules := rbacauth.New(nil)
	p := &Policy{Authorizer: union.Authorizers{union.PrivilegedGroups{user.SystemPrivileged}, rules}, Rules: rules}
	mk := func(f func(*testing.T, *Policy) (rest.Storage, error)) rest.Storage {
		st, err := f(t, p)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	roles := mk(func(t *testing.T, p *Policy) (rest.Storage, error) { return NewRolesREST(registrytest.Options(t), p) })
	clusterRoles := mk(func(t *testing.T, p *Policy) (rest.Storage, error) {
		return NewClusterRolesREST(registrytest.Options(t), p)
	})
	bindings := mk(func(t *testing.T, p *Policy) (rest.Storage, error) {
		return NewRoleBindingsREST(registrytest.Options(t), p)
	})
	clusterBindings := mk(func(t *testing.T, p *Policy) (rest.Storage, error) {
		return NewClusterRoleBindingsREST(registrytest.Options(t), p)
	})
	base := context.Background()
	rules.SetLister(&lister{ctx: base, roles: roles, clusterRoles: clusterRoles, bindings: bindings, clusterBindings: clusterBindings})

	admin := &user.Info{Name: "admin", Groups: []string{user.SystemPrivileged, user.AllAuthenticated}}
	bob := &user.Info{Name: "bob", Groups: []string{user.AllAuthenticated}}
	as := func(u *user.Info, resource, ns string) context.Context {
		return request.WithUser(registrytest.Context(rbacv1.GroupName, "v1", resource, ns), u)
	}
	create := func(u *user.Info, resource, ns string, obj runtime.Object) error {
		st := map[string]rest.Storage{"roles": roles, "clusterroles": clusterRoles, "rolebindings": bindings, "clusterrolebindings": clusterBindings}[resource]
		_, err := st.(rest.Creater).Create(as(u, resource, ns), obj, nil, &metav1.CreateOptions{})
		return err
	}

	// Validation, with upstream's field paths.
	err := create(admin, "roles", "ns", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}},
		{Verbs: []string{"get"}},
	}})
	want := []string{"FieldValueRequired rules[0].verbs", "FieldValueInvalid rules[1].nonResourceURLs",
		"FieldValueRequired rules[2].apiGroups", "FieldValueRequired rules[2].resources"}
	if got := registrytest.Causes(t, err); !slices.Equal(got, want) {
		t.Errorf("role causes: got %v, want %v", got, want)
	}
	err = create(admin, "clusterrolebindings", "", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "x", Kind: "Role", Name: "r"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sa"}, {Kind: "Robot", Name: "r"}, {Kind: "User", APIGroup: "x", Name: "u"}}})
	want = []string{"FieldValueNotSupported roleRef.apiGroup", "FieldValueNotSupported roleRef.kind",
		"FieldValueRequired subjects[0].namespace", "FieldValueNotSupported subjects[1].kind", "FieldValueNotSupported subjects[2].apiGroup"}
	if got := registrytest.Causes(t, err); !slices.Equal(got, want) {
		t.Errorf("binding causes: got %v, want %v", got, want)
	}

	// The admin (system:masters) writes anything.
	for _, c := range []struct {
		resource, ns string
		obj          runtime.Object
	}{
		{"clusterroles", "", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "pods-reader"}, Rules: []rbacv1.PolicyRule{rule("get list", "", "pods")}}},
		{"clusterroles", "", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "secrets-reader"}, Rules: []rbacv1.PolicyRule{rule("get", "", "secrets")}}},
		{"roles", "ns", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "rbac-writer"}, Rules: []rbacv1.PolicyRule{
			rule("create update", rbacv1.GroupName, "roles"), rule("create update", rbacv1.GroupName, "rolebindings")}}},
		{"rolebindings", "ns", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bob-writer"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "rbac-writer"}, Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "bob"}}}},
		{"rolebindings", "ns", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bob-pods"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "pods-reader"}, Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "bob"}}}},
	} {
		if err := create(admin, c.resource, c.ns, c.obj); err != nil {
			t.Fatalf("admin create %s: %v", c.resource, err)
		}
	}

	// bob holds pods get/list in ns and may write roles and bindings there.
	if err := create(bob, "roles", "ns", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "ok"}, Rules: []rbacv1.PolicyRule{rule("get", "", "pods")}}); err != nil {
		t.Errorf("bob creates a role he holds: %v", err)
	}
	err = create(bob, "roles", "ns", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "escalate"}, Rules: []rbacv1.PolicyRule{rule("get delete", "", "pods")}})
	wantMsg := `roles.rbac.authorization.k8s.io "escalate" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`
	if !apierrors.IsForbidden(err) || registrytest.Status(t, err).Message != wantMsg {
		t.Errorf("bob escalates: got %v, want %s", err, wantMsg)
	}
	err = create(bob, "rolebindings", "ns", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "secrets-reader"}, Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "bob"}}})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`) {
		t.Errorf("bob binds secrets-reader: got %v, want forbidden", err)
	}
	if err := create(bob, "rolebindings", "ns", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-pods"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "pods-reader"}, Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}}}); err != nil {
		t.Errorf("bob binds what he holds: %v", err)
	}
	err = create(bob, "rolebindings", "ns", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "missing"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "missing"}, Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}}})
	if !apierrors.IsNotFound(err) {
		t.Errorf("bob binds a missing role: got %v, want NotFound", err)
	}

	// bind on the role lets bob bind it without holding it.
	if err := create(admin, "roles", "ns", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "binder"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"secrets-reader"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := create(admin, "rolebindings", "ns", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bob-binder"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "binder"}, Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "bob"}}}); err != nil {
		t.Fatal(err)
	}
	if err := create(bob, "rolebindings", "ns", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "secrets2"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "secrets-reader"}, Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}}}); err != nil {
		t.Errorf("bob binds with the bind verb: %v", err)
	}

	// roleRef is immutable.
	obj, err := bindings.(rest.Getter).Get(as(admin, "rolebindings", "ns"), "bob-pods", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := obj.(*rbacv1.RoleBinding).DeepCopy()
	changed.RoleRef.Name = "secrets-reader"
	_, _, err = bindings.(rest.Updater).Update(as(admin, "rolebindings", "ns"), "bob-pods", registrytest.Updated{Obj: changed}, nil, nil, false, &metav1.UpdateOptions{})
	if got := registrytest.Causes(t, err); !slices.Equal(got, []string{"FieldValueInvalid roleRef"}) {
		t.Errorf("roleRef change: got %v", got)
	}
}

func TestTables(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tbl, err := roleTable.ConvertToTable(context.Background(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", CreationTimestamp: created}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := []any{tbl.ColumnDefinitions[0].Name, tbl.ColumnDefinitions[1].Name}; !slices.Equal(got, []any{"Name", "Created At"}) {
		t.Errorf("role columns %v", got)
	}
	if got := tbl.Rows[0].Cells; !slices.Equal(got, []any{"r", "2026-01-02T03:04:05Z"}) {
		t.Errorf("role cells %v", got)
	}
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", CreationTimestamp: metav1.NewTime(time.Now().Add(-3 * time.Minute))},
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "u1"}, {Kind: "User", Name: "u2"}, {Kind: "Group", Name: "g"},
			{Kind: "ServiceAccount", Name: "sa"}, {Kind: "ServiceAccount", Namespace: "other", Name: "sa2"}}}
	tbl, err = bindingTable.ConvertToTable(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "Name,Role,Age,Users,Groups,ServiceAccounts" {
		t.Errorf("binding columns %v", names)
	}
	if got := tbl.Rows[0].Cells; !slices.Equal(got, []any{"b", "ClusterRole/view", "3m", "u1, u2", "g", "ns/sa, other/sa2"}) {
		t.Errorf("binding cells %v", got)
	}
}
