package rbac

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer/union"
	rbacauth "github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/registry/table"
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
	// rules[0].verbs last: upstream answers it from declarative validation.
	want := []string{"FieldValueInvalid rules[1].nonResourceURLs",
		"FieldValueRequired rules[2].apiGroups", "FieldValueRequired rules[2].resources", "FieldValueRequired rules[0].verbs"}
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
	tbl, err = roleBindingTable.ConvertToTable(context.Background(), b, nil)
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

// The column descriptions kube-apiserver v1.37.2 sends in the Tables of
// rolebindings and clusterrolebindings (GET ...;as=Table on the
// reference, 2026-11-27).
func TestBindingTableDescriptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    table.Convertor
		want []string
	}{
		{"rolebindings", roleBindingTable, []string{
			"roleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
			"Users in the roleBinding", "Groups in the roleBinding", "ServiceAccounts in the roleBinding"}},
		{"clusterrolebindings", clusterRoleBindingTable, []string{
			"roleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
			"Users in the clusterRoleBinding", "Groups in the clusterRoleBinding", "ServiceAccounts in the clusterRoleBinding"}},
	} {
		cols := tc.c.Columns
		got := []string{cols[1].Description, cols[3].Description, cols[4].Description, cols[5].Description}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got descriptions\n  %q\nwant\n  %q", tc.name, got, tc.want)
		}
	}
}

// TestValidationAsDeclarative checks whole error lists, order and words,
// against kube-apiserver v1.37.2: there declarative validation (the
// +k8s:required beta tags on PolicyRule.verbs, RoleRef.name and
// Subject.name, k8s.io/kubernetes@v1.37.2
// pkg/apis/rbac/v1/zz_generated.validations.go) replaces the handwritten
// errors upstream marks covered (pkg/apis/rbac/validation/validation.go)
// and appends its own after the rest, in field declaration order. The want
// lists are kube-apiserver v1.37.2's answers to the same objects, created
// with kubectl on 2026-11-27.
func TestValidationAsDeclarative(t *testing.T) {
	roles, err := NewRolesREST(registrytest.Options(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	clusterRoles, err := NewClusterRolesREST(registrytest.Options(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	bindings, err := NewRoleBindingsREST(registrytest.Options(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	clusterBindings, err := NewClusterRoleBindingsREST(registrytest.Options(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, resource, ns string
		st                 rest.Storage
		obj                runtime.Object
		want               []string
	}{{
		name: "role", resource: "roles", ns: "ns", st: roles,
		obj: &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}},
			{Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}},
		}},
		want: []string{
			`rules[1].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs`,
			`rules[2].apiGroups: Required value: resource rules must supply at least one api group`,
			`rules[2].resources: Required value: resource rules must supply at least one resource`,
			`rules[0].verbs: Required value`,
			`rules[3].verbs: Required value`,
		},
	}, {
		name: "clusterrole", resource: "clusterroles", st: clusterRoles,
		obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "bad"},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{}},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{}},
				{NonResourceURLs: []string{"/x"}, Resources: []string{"a"}},
			}},
		want: []string{
			`rules[0].resources: Required value: resource rules must supply at least one resource`,
			`rules[1].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs`,
			`aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil`,
			`rules[0].verbs: Required value`,
			`rules[1].verbs: Required value`,
		},
	}, {
		name: "rolebinding", resource: "rolebindings", ns: "ns", st: bindings,
		obj: &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bad5"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Foo"},
			// apiGroup as defaulting (SetDefaults_Subject) sets it.
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName}}},
		want: []string{
			`roleRef.kind: Unsupported value: "Foo": supported values: "Role", "ClusterRole"`,
			`subjects[0].name: Required value`,
			`roleRef.name: Required value`,
		},
	}, {
		name: "clusterrolebinding", resource: "clusterrolebindings", st: clusterBindings,
		obj: &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bad6"},
			RoleRef: rbacv1.RoleRef{APIGroup: "x", Kind: "Role"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount"}, {Kind: "Robot", Name: "r"},
				{Kind: "User", APIGroup: "x"}}},
		want: []string{
			`roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io"`,
			`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`,
			`subjects[0].namespace: Required value`,
			`subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`,
			`subjects[2].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io"`,
			`subjects[0].name: Required value`,
			`subjects[2].name: Required value`,
			`roleRef.name: Required value`,
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := registrytest.Context(rbacv1.GroupName, "v1", c.resource, c.ns)
			_, err := c.st.(rest.Creater).Create(ctx, c.obj, nil, &metav1.CreateOptions{})
			st := registrytest.Status(t, err)
			if st.Details == nil {
				t.Fatalf("no details: %v", err)
			}
			var got []string
			for _, cause := range st.Details.Causes {
				got = append(got, cause.Field+": "+cause.Message)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("causes:\n got  %q\n want %q", got, c.want)
			}
		})
	}
}

// A guarded store's watches, lists and gets are its generic Store's: the
// installed store (and only it) says they may share objects, so that the
// RBAC informers' watches take the encode-once event objects.
func TestGuardedSharesObjects(t *testing.T) {
	a, b := &guarded{}, &guarded{}
	if !a.WatchSharesObjects(a) || !a.ListSharesObjects(a) || !a.GetSharesObjects(a) {
		t.Error("a guarded store does not share its own objects")
	}
	if a.WatchSharesObjects(b) || a.ListSharesObjects(b) || a.GetSharesObjects(b) {
		t.Error("a guarded store shares another store's objects")
	}
	if a.WatchSharesObjects(a.Store) {
		t.Error("a guarded store shares its embedded Store's objects as installed elsewhere")
	}
}

// recordingAuthorizer allows everything and records what it was asked.
type recordingAuthorizer struct{ asked []authorizer.Attributes }

func (r *recordingAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	r.asked = append(r.asked, a)
	return authorizer.DecisionAllow, "", nil
}

// The escalate check asks about the request's own role resource,
// namespace and name, as upstream's RoleEscalationAuthorized
// (pkg/registry/rbac/escalation_check.go, v1.37.2): no name on a create
// (the path has none), the path's on an update. kube-apiserver v1.37.2
// sent a webhook authorizer "escalate roles" without a name for
// `kubectl create role` (2026-11-27).
func TestEscalateAsksAboutTheRequest(t *testing.T) {
	rec := &recordingAuthorizer{}
	p := &Policy{Authorizer: rec}
	bob := &user.Info{Name: "bob", Groups: []string{user.AllAuthenticated}}
	gr := rbacv1.SchemeGroupVersion.WithResource("roles").GroupResource()
	create := request.WithUser(registrytest.Context(rbacv1.GroupName, "v1", "roles", "ns"), bob)
	info, _ := request.RequestInfoFrom(create)
	named := *info
	named.Name = "r1"
	update := request.WithRequestInfo(create, &named)
	for _, ctx := range []context.Context{create, update} {
		if err := p.checkRole(ctx, gr, "ns", "r1", []rbacv1.PolicyRule{rule("*", "*", "*")}, false); err != nil {
			t.Fatal(err)
		}
	}
	want := []authorizer.Attributes{
		{User: bob, Verb: "escalate", ResourceRequest: true, APIGroup: rbacv1.GroupName, APIVersion: "*", Resource: "roles", Namespace: "ns"},
		{User: bob, Verb: "escalate", ResourceRequest: true, APIGroup: rbacv1.GroupName, APIVersion: "*", Resource: "roles", Namespace: "ns", Name: "r1"},
	}
	if !reflect.DeepEqual(rec.asked, want) {
		t.Errorf("asked %+v, want %+v", rec.asked, want)
	}
}
