package controlplane

import (
	rbacv1 "k8s.io/api/rbac/v1"

	rbacregistry "github.com/kapi-dev/kapi/pkg/controlplane/registry/rbac"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// rbacGroup is the table of rbac.authorization.k8s.io: roles and bindings,
// whose writes are checked against escalation with Config.RBAC (nil: no
// checks).
var rbacGroup = apiGroup{name: rbacv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "roles", storage: rbacStorage(rbacregistry.NewRolesREST)},
		{name: "clusterroles", storage: rbacStorage(rbacregistry.NewClusterRolesREST)},
		{name: "rolebindings", storage: rbacStorage(rbacregistry.NewRoleBindingsREST)},
		{name: "clusterrolebindings", storage: rbacStorage(rbacregistry.NewClusterRoleBindingsREST)},
	},
}}}

func rbacStorage(newREST func(generic.RESTOptions, *rbacregistry.Policy) (rest.Storage, error)) storageFunc {
	return func(b *storageBuilder) (resourceStorage, error) {
		var p *rbacregistry.Policy
		if b.config.RBAC != nil {
			p = &rbacregistry.Policy{Authorizer: b.config.Authorizer, Rules: b.config.RBAC}
		}
		st, err := newREST(b.opts, p)
		if err != nil {
			return resourceStorage{}, err
		}
		return resourceStorage{storage: st}, nil
	}
}
