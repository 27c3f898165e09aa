package rbacv1

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// RegisterDefaults registers the defaulters of RoleBinding,
// ClusterRoleBinding and their lists on s.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&rbacv1.RoleBinding{}, func(obj any) { SetObjectDefaults_RoleBinding(obj.(*rbacv1.RoleBinding)) })
	s.AddTypeDefaultingFunc(&rbacv1.RoleBindingList{}, func(obj any) {
		l := obj.(*rbacv1.RoleBindingList)
		for i := range l.Items {
			SetObjectDefaults_RoleBinding(&l.Items[i])
		}
	})
	s.AddTypeDefaultingFunc(&rbacv1.ClusterRoleBinding{}, func(obj any) {
		SetObjectDefaults_ClusterRoleBinding(obj.(*rbacv1.ClusterRoleBinding))
	})
	s.AddTypeDefaultingFunc(&rbacv1.ClusterRoleBindingList{}, func(obj any) {
		l := obj.(*rbacv1.ClusterRoleBindingList)
		for i := range l.Items {
			SetObjectDefaults_ClusterRoleBinding(&l.Items[i])
		}
	})
	return nil
}

// SetDefaults_RoleRef defaults apiGroup to rbac.authorization.k8s.io.
func SetDefaults_RoleRef(r *rbacv1.RoleRef) {
	if r.APIGroup == "" {
		r.APIGroup = rbacv1.GroupName
	}
}

// SetDefaults_Subject defaults apiGroup by kind.
func SetDefaults_Subject(s *rbacv1.Subject) {
	if s.APIGroup != "" {
		return
	}
	switch s.Kind {
	case rbacv1.UserKind, rbacv1.GroupKind:
		s.APIGroup = rbacv1.GroupName
	}
}

// SetObjectDefaults_RoleBinding defaults a RoleBinding.
func SetObjectDefaults_RoleBinding(b *rbacv1.RoleBinding) {
	SetDefaults_RoleRef(&b.RoleRef)
	for i := range b.Subjects {
		SetDefaults_Subject(&b.Subjects[i])
	}
}

// SetObjectDefaults_ClusterRoleBinding defaults a ClusterRoleBinding.
func SetObjectDefaults_ClusterRoleBinding(b *rbacv1.ClusterRoleBinding) {
	SetDefaults_RoleRef(&b.RoleRef)
	for i := range b.Subjects {
		SetDefaults_Subject(&b.Subjects[i])
	}
}
