package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
)

// InformerLister reads the RBAC objects from client-go listers.
type InformerLister struct {
	Roles               rbaclisters.RoleLister
	ClusterRoles        rbaclisters.ClusterRoleLister
	RoleBindings        rbaclisters.RoleBindingLister
	ClusterRoleBindings rbaclisters.ClusterRoleBindingLister
}

var _ Lister = InformerLister{}

// NewInformerLister registers the four RBAC informers on f and reads from
// their listers (start f and wait for its caches before trusting it).
func NewInformerLister(f informers.SharedInformerFactory) InformerLister {
	r := f.Rbac().V1()
	return InformerLister{
		Roles:               r.Roles().Lister(),
		ClusterRoles:        r.ClusterRoles().Lister(),
		RoleBindings:        r.RoleBindings().Lister(),
		ClusterRoleBindings: r.ClusterRoleBindings().Lister(),
	}
}

// GetRole implements Lister.
func (l InformerLister) GetRole(namespace, name string) (*rbacv1.Role, error) {
	return l.Roles.Roles(namespace).Get(name)
}

// GetClusterRole implements Lister.
func (l InformerLister) GetClusterRole(name string) (*rbacv1.ClusterRole, error) {
	return l.ClusterRoles.Get(name)
}

// ListRoleBindings implements Lister.
func (l InformerLister) ListRoleBindings(namespace string) ([]*rbacv1.RoleBinding, error) {
	return l.RoleBindings.RoleBindings(namespace).List(labels.Everything())
}

// ListClusterRoleBindings implements Lister.
func (l InformerLister) ListClusterRoleBindings() ([]*rbacv1.ClusterRoleBinding, error) {
	return l.ClusterRoleBindings.List(labels.Everything())
}
