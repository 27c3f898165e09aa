package rbac

import (
	"context"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rbacvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/rbac"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resources served.
var (
	RolesResource               = rbacv1.Resource("roles")
	ClusterRolesResource        = rbacv1.Resource("clusterroles")
	RoleBindingsResource        = rbacv1.Resource("rolebindings")
	ClusterRoleBindingsResource = rbacv1.Resource("clusterrolebindings")
)

// namespaceOf is the namespace of a write: the object's, else the
// request's.
func namespaceOf(ctx context.Context, m metav1.Object) string {
	if ns := m.GetNamespace(); ns != "" {
		return ns
	}
	return request.NamespaceFrom(ctx)
}

func newStore(opts generic.RESTOptions, s *generic.Store) (*generic.Store, error) {
	return generic.NewStore(opts, rbacv1.SchemeGroupVersion, s)
}

// NewRolesREST returns the storage of roles.
func NewRolesREST(opts generic.RESTOptions, p *Policy) (rest.Storage, error) {
	st, err := newStore(opts, &generic.Store{
		NewFunc:                   func() runtime.Object { return &rbacv1.Role{} },
		NewListFunc:               func() runtime.Object { return &rbacv1.RoleList{} },
		DefaultQualifiedResource:  RolesResource,
		SingularQualifiedResource: rbacv1.Resource("role"),
		NameValidator:             rbacvalidation.ValidateRBACName,
		CreateStrategy:            strategy[*rbacv1.Role]{namespaced: true, validate: rbacvalidation.ValidateRole},
		UpdateStrategy:            strategy[*rbacv1.Role]{namespaced: true, validate: rbacvalidation.ValidateRole},
		TableConvertor:            roleTable,
	})
	if err != nil || p == nil {
		return st, err
	}
	return &guarded{Store: st, check: func(ctx context.Context, obj, _ runtime.Object) error {
		r := obj.(*rbacv1.Role)
		return p.checkRole(ctx, RolesResource, namespaceOf(ctx, r), r.Name, r.Rules, false)
	}}, nil
}

// NewClusterRolesREST returns the storage of clusterroles.
func NewClusterRolesREST(opts generic.RESTOptions, p *Policy) (rest.Storage, error) {
	st, err := newStore(opts, &generic.Store{
		NewFunc:                   func() runtime.Object { return &rbacv1.ClusterRole{} },
		NewListFunc:               func() runtime.Object { return &rbacv1.ClusterRoleList{} },
		DefaultQualifiedResource:  ClusterRolesResource,
		SingularQualifiedResource: rbacv1.Resource("clusterrole"),
		NameValidator:             rbacvalidation.ValidateRBACName,
		CreateStrategy:            strategy[*rbacv1.ClusterRole]{validate: rbacvalidation.ValidateClusterRole},
		UpdateStrategy:            strategy[*rbacv1.ClusterRole]{validate: rbacvalidation.ValidateClusterRole},
		TableConvertor:            roleTable,
	})
	if err != nil || p == nil {
		return st, err
	}
	return &guarded{Store: st, check: func(ctx context.Context, obj, old runtime.Object) error {
		r := obj.(*rbacv1.ClusterRole)
		aggregated := r.AggregationRule != nil
		if o, ok := old.(*rbacv1.ClusterRole); ok && aggregated && o.AggregationRule != nil &&
			rulesEqual(o.AggregationRule.ClusterRoleSelectors, r.AggregationRule.ClusterRoleSelectors) {
			aggregated = false // the selectors did not change
		}
		return p.checkRole(ctx, ClusterRolesResource, "", r.Name, r.Rules, aggregated)
	}}, nil
}

func rulesEqual(a, b []metav1.LabelSelector) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].String() != b[i].String() {
			return false
		}
	}
	return true
}

// NewRoleBindingsREST returns the storage of rolebindings.
func NewRoleBindingsREST(opts generic.RESTOptions, p *Policy) (rest.Storage, error) {
	s := strategy[*rbacv1.RoleBinding]{namespaced: true, validate: rbacvalidation.ValidateRoleBinding,
		validateUpdate: func(n, o *rbacv1.RoleBinding) field.ErrorList {
			return rbacvalidation.ValidateRoleRefUpdate(n.RoleRef, o.RoleRef)
		}}
	st, err := newStore(opts, &generic.Store{
		NewFunc:                   func() runtime.Object { return &rbacv1.RoleBinding{} },
		NewListFunc:               func() runtime.Object { return &rbacv1.RoleBindingList{} },
		DefaultQualifiedResource:  RoleBindingsResource,
		SingularQualifiedResource: rbacv1.Resource("rolebinding"),
		NameValidator:             rbacvalidation.ValidateRBACName,
		CreateStrategy:            s,
		UpdateStrategy:            s,
		TableConvertor:            roleBindingTable,
	})
	if err != nil || p == nil {
		return st, err
	}
	return &guarded{Store: st, check: func(ctx context.Context, obj, _ runtime.Object) error {
		b := obj.(*rbacv1.RoleBinding)
		return p.checkBinding(ctx, RoleBindingsResource, namespaceOf(ctx, b), b.Name, b.RoleRef)
	}}, nil
}

// NewClusterRoleBindingsREST returns the storage of clusterrolebindings.
func NewClusterRoleBindingsREST(opts generic.RESTOptions, p *Policy) (rest.Storage, error) {
	s := strategy[*rbacv1.ClusterRoleBinding]{validate: rbacvalidation.ValidateClusterRoleBinding,
		validateUpdate: func(n, o *rbacv1.ClusterRoleBinding) field.ErrorList {
			return rbacvalidation.ValidateRoleRefUpdate(n.RoleRef, o.RoleRef)
		}}
	st, err := newStore(opts, &generic.Store{
		NewFunc:                   func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
		NewListFunc:               func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
		DefaultQualifiedResource:  ClusterRoleBindingsResource,
		SingularQualifiedResource: rbacv1.Resource("clusterrolebinding"),
		NameValidator:             rbacvalidation.ValidateRBACName,
		CreateStrategy:            s,
		UpdateStrategy:            s,
		TableConvertor:            clusterRoleBindingTable,
	})
	if err != nil || p == nil {
		return st, err
	}
	return &guarded{Store: st, check: func(ctx context.Context, obj, _ runtime.Object) error {
		b := obj.(*rbacv1.ClusterRoleBinding)
		return p.checkBinding(ctx, ClusterRoleBindingsResource, "", b.Name, b.RoleRef)
	}}, nil
}

// strategy is the behaviour of the four kinds: no status, unconditional
// updates allowed, no create on update (upstream's RBAC strategies).
type strategy[T runtime.Object] struct {
	namespaced     bool
	validate       func(T) field.ErrorList
	validateUpdate func(n, o T) field.ErrorList
}

func (s strategy[T]) NamespaceScoped() bool                                          { return s.namespaced }
func (strategy[T]) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy[T]) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (strategy[T]) AllowCreateOnUpdate() bool                                        { return true }
func (strategy[T]) AllowUnconditionalUpdate() bool                                   { return true }
func (strategy[T]) Canonicalize(runtime.Object)                                      {}
func (strategy[T]) WarningsOnCreate(context.Context, runtime.Object) []string        { return nil }
func (strategy[T]) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (s strategy[T]) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.validate(obj.(T))
}

func (s strategy[T]) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	errs := s.validate(obj.(T))
	if s.validateUpdate != nil {
		errs = append(errs, s.validateUpdate(obj.(T), old.(T))...)
	}
	return errs
}

// roleTable renders roles and clusterroles as upstream's printers: NAME
// CREATED AT (RFC 3339, UTC).
var roleTable = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Created At", Type: "date", Description: table.ObjectMetaDescriptions["creationTimestamp"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		m, ok := obj.(metav1.Object)
		if !ok {
			return nil, false
		}
		return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}, true
	},
}

// roleBindingTable and clusterRoleBindingTable render rolebindings and
// clusterrolebindings as upstream's printers: NAME ROLE AGE, and -o wide
// USERS GROUPS SERVICEACCOUNTS. The descriptions are upstream's
// roleBindingsColumnDefinitions and clusterRoleBindingsColumnDefinitions
// (the roleRef docs of rbac/v1beta1's types).
var (
	roleBindingTable        = bindingTable(rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], "roleBinding")
	clusterRoleBindingTable = bindingTable(rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], "clusterRoleBinding")
)

func bindingTable(roleRefDoc, kind string) table.Convertor {
	return table.Convertor{
		Columns: []metav1.TableColumnDefinition{
			table.NameColumn,
			{Name: "Role", Type: "string", Description: roleRefDoc},
			table.AgeColumn,
			{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
			{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
			{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
		},
		Row: bindingRow,
	}
}

// bindingRow is one rolebinding's or clusterrolebinding's row.
func bindingRow(obj runtime.Object) ([]any, bool) {
	var (
		name     string
		ref      rbacv1.RoleRef
		subjects []rbacv1.Subject
		created  metav1.Time
		ns       string
	)
	switch b := obj.(type) {
	case *rbacv1.RoleBinding:
		name, ref, subjects, created, ns = b.Name, b.RoleRef, b.Subjects, b.CreationTimestamp, b.Namespace
	case *rbacv1.ClusterRoleBinding:
		name, ref, subjects, created = b.Name, b.RoleRef, b.Subjects, b.CreationTimestamp
	default:
		return nil, false
	}
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			sns := s.Namespace
			if sns == "" {
				sns = ns
			}
			sas = append(sas, sns+"/"+s.Name)
		}
	}
	return []any{name, ref.Kind + "/" + ref.Name, table.Since(created),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}, true
}
