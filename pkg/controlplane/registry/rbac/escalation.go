package rbac

import (
	"context"
	"errors"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	rbacauth "github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Policy is what the escalation checks need: the server's authorizer
// (for the escalate and bind verbs) and the RBAC rule resolver (for the
// rules a user holds). A nil Policy disables the checks.
type Policy struct {
	Authorizer authorizer.Authorizer
	Rules      *rbacauth.Authorizer
}

// escalationAllowed: system:masters may write anything (upstream's
// EscalationAllowed).
func escalationAllowed(u *user.Info) bool {
	return u.InGroup(user.SystemPrivileged)
}

// authorized asks the authorizer whether u may verb the role or
// clusterrole name (in namespace).
func (p *Policy) authorized(ctx context.Context, u *user.Info, verb, resource, namespace, name string) bool {
	if p.Authorizer == nil {
		return false
	}
	d, _, _ := p.Authorizer.Authorize(ctx, authorizer.Attributes{
		User: u, Verb: verb, ResourceRequest: true, APIGroup: rbacv1.GroupName, APIVersion: "*",
		Resource: resource, Namespace: namespace, Name: name,
	})
	return d == authorizer.DecisionAllow
}

var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// checkRole guards a write of a Role or ClusterRole with rules, in
// upstream's order (pkg/registry/rbac/{role,clusterrole}/policybased,
// v1.37.2): system:masters, or the escalate verb on the request's
// resource, skip every check; then the rules must not escalate; then an
// aggregation rule needs full authority.
func (p *Policy) checkRole(ctx context.Context, gr schema.GroupResource, namespace, name string, rules []rbacv1.PolicyRule, aggregated bool) error {
	u, _ := request.UserFrom(ctx)
	if escalationAllowed(u) || p.escalateAuthorized(ctx, u) {
		return nil
	}
	if err := p.Rules.ConfirmNoEscalation(u, namespace, rules); err != nil {
		return apierrors.NewForbidden(gr, name, err)
	}
	if aggregated && p.Rules.ConfirmNoEscalation(u, "", fullAuthority) != nil {
		// Only who holds everything may aggregate (upstream's rule).
		return apierrors.NewForbidden(gr, name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
	}
	return nil
}

// escalateAuthorized asks for the escalate verb on the request's own
// role resource, namespace and name, as upstream's
// RoleEscalationAuthorized: the name is the path's (none on a create).
func (p *Policy) escalateAuthorized(ctx context.Context, u *user.Info) bool {
	info, ok := request.RequestInfoFrom(ctx)
	if !ok || !info.IsResourceRequest || info.APIGroup != rbacv1.GroupName || (info.Resource != "roles" && info.Resource != "clusterroles") {
		return false
	}
	return p.authorized(ctx, u, "escalate", info.Resource, info.Namespace, info.Name)
}

// checkBinding guards a write of a binding to ref (in namespace; "" for
// a ClusterRoleBinding).
func (p *Policy) checkBinding(ctx context.Context, gr schema.GroupResource, namespace, name string, ref rbacv1.RoleRef) error {
	u, _ := request.UserFrom(ctx)
	if escalationAllowed(u) {
		return nil
	}
	// The bind check is made in the binding's namespace, for a ClusterRole
	// too (upstream's BindingAuthorized): a Role may grant bind on
	// clusterroles within its namespace.
	resource := "clusterroles"
	if ref.Kind == "Role" {
		resource = "roles"
	}
	if p.authorized(ctx, u, "bind", resource, namespace, ref.Name) {
		return nil
	}
	rules, err := p.Rules.RoleRefRules(ref, namespace)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		return apierrors.NewForbidden(gr, name, err)
	}
	if err := p.Rules.ConfirmNoEscalation(u, namespace, rules); err != nil {
		return apierrors.NewForbidden(gr, name, err)
	}
	return nil
}

// guarded is a Store whose creates and updates pass check first.
type guarded struct {
	*generic.Store
	// check returns an error if the caller may not write obj; old is the
	// stored object on update (nil on create).
	check func(ctx context.Context, obj, old runtime.Object) error
}

var (
	_ rest.Creater             = (*guarded)(nil)
	_ rest.Updater             = (*guarded)(nil)
	_ rest.SharedObjectWatcher = (*guarded)(nil)
	_ rest.SharedObjectLister  = (*guarded)(nil)
	_ rest.SharedObjectGetter  = (*guarded)(nil)
)

// WatchSharesObjects implements rest.SharedObjectWatcher: guarded changes
// creates and updates only, so a watch of this very store is its generic
// Store's, unchanged, and may take shared, encode-once event objects (the
// in-process RBAC informers watch every role and binding).
func (g *guarded) WatchSharesObjects(w rest.Watcher) bool {
	o, ok := w.(*guarded)
	return ok && o == g
}

// ListSharesObjects implements rest.SharedObjectLister (see
// WatchSharesObjects).
func (g *guarded) ListSharesObjects(l rest.Lister) bool {
	o, ok := l.(*guarded)
	return ok && o == g
}

// GetSharesObjects implements rest.SharedObjectGetter (see
// WatchSharesObjects).
func (g *guarded) GetSharesObjects(r rest.Getter) bool {
	o, ok := r.(*guarded)
	return ok && o == g
}

// DeletesCorruptObjects implements rest.CorruptObjectDeleter: false, as
// kube-apiserver v1.37.2's policy-based RBAC storages provide no corrupt
// object deleter (a DELETE of a role or binding with
// ignoreStoreReadErrorWithClusterBreakingPotential is a 500 "no unsafe
// deleter provided, ...", checked on the reference).
func (g *guarded) DeletesCorruptObjects() bool { return false }

func (g *guarded) Create(ctx context.Context, obj runtime.Object, v rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	if err := g.check(ctx, obj, nil); err != nil {
		return nil, err
	}
	return g.Store.Create(ctx, obj, v, opts)
}

func (g *guarded) Update(ctx context.Context, name string, info rest.UpdatedObjectInfo, cv rest.ValidateObjectFunc, uv rest.ValidateObjectUpdateFunc, force bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return g.Store.Update(ctx, name, checkedInfo{info, g.check}, cv, uv, force, opts)
}

type checkedInfo struct {
	rest.UpdatedObjectInfo
	check func(ctx context.Context, obj, old runtime.Object) error
}

func (c checkedInfo) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := c.UpdatedObjectInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	if old != nil && onlyGCFieldsChanged(obj, old) {
		return obj, nil
	}
	if err := c.check(ctx, obj, old); err != nil {
		return nil, err
	}
	return obj, nil
}

// onlyGCFieldsChanged: an update that only changes ownerReferences and
// finalizers (what the garbage collector writes) needs no check
// (upstream's IsOnlyMutatingGCFields).
func onlyGCFieldsChanged(obj, old runtime.Object) bool {
	if old == nil {
		return false
	}
	o := obj.DeepCopyObject()
	om, err1 := metaOf(o)
	oldm, err2 := metaOf(old)
	if err1 != nil || err2 != nil {
		return false
	}
	om.SetOwnerReferences(oldm.GetOwnerReferences())
	om.SetFinalizers(oldm.GetFinalizers())
	om.SetResourceVersion(oldm.GetResourceVersion())
	om.SetManagedFields(oldm.GetManagedFields())
	return equality.Semantic.DeepEqual(o, old)
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, errors.New("no metadata")
	}
	return m, nil
}
