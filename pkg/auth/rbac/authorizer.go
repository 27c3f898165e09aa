package rbac

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Lister reads the RBAC objects (client-go's listers over informers do;
// see [NewInformerLister]). A missing object is a NotFound error.
type Lister interface {
	GetRole(namespace, name string) (*rbacv1.Role, error)
	GetClusterRole(name string) (*rbacv1.ClusterRole, error)
	ListRoleBindings(namespace string) ([]*rbacv1.RoleBinding, error)
	ListClusterRoleBindings() ([]*rbacv1.ClusterRoleBinding, error)
}

// errNotReady answers while no Lister is set (before the informers have
// synced at start).
var errNotReady = errors.New("the RBAC caches are not synced yet")

// Authorizer is the RBAC authorizer: it allows a request when a rule of a
// role bound to the user allows it, and has no opinion otherwise (as
// upstream, it never denies). It is also the rule resolver of the access
// reviews and of the escalation checks.
type Authorizer struct {
	lister atomic.Pointer[Lister]
}

var _ authorizer.Authorizer = (*Authorizer)(nil)

// New returns an RBAC authorizer reading from l; l may be nil and set
// later with SetLister (until then only the errors of an unready
// authorizer are answered).
func New(l Lister) *Authorizer {
	a := &Authorizer{}
	if l != nil {
		a.SetLister(l)
	}
	return a
}

// SetLister makes a read from l.
func (a *Authorizer) SetLister(l Lister) { a.lister.Store(&l) }

func (a *Authorizer) getLister() Lister {
	if p := a.lister.Load(); p != nil {
		return *p
	}
	return nil
}

// Authorize implements authorizer.Authorizer. An allowed request's reason
// names the binding, role and subject that allowed it (for the audit
// log); a request no rule allows gets no opinion, with the errors met on
// the way (a binding to a missing role, ...) as the reason, as upstream:
// "RBAC: clusterrole.rbac.authorization.k8s.io \"x\" not found".
func (a *Authorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	var (
		allowedBy string
		errs      []error
	)
	a.visitRulesFor(attrs.User, attrs.Namespace, func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
			return true
		}
		if RuleAllows(attrs, rule) {
			allowedBy = source.String()
			return false
		}
		return true
	})
	if allowedBy != "" {
		return authorizer.DecisionAllow, "RBAC: allowed by " + allowedBy, nil
	}
	reason := ""
	if len(errs) > 0 {
		reason = "RBAC: " + aggregate(errs)
	}
	return authorizer.DecisionNoOpinion, reason, nil
}

// aggregate formats errors as apimachinery's aggregate does: one error
// alone, several as "[a, b]".
func aggregate(errs []error) string {
	if len(errs) == 1 {
		return errs[0].Error()
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// PolicyRulesFor returns every rule u holds in namespace (cluster-wide
// rules included; namespace "" is the cluster scope only) and the errors
// met resolving them.
func (a *Authorizer) PolicyRulesFor(u *user.Info, namespace string) ([]rbacv1.PolicyRule, []error) {
	var (
		rules []rbacv1.PolicyRule
		errs  []error
	)
	a.visitRulesFor(u, namespace, func(_ fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
		} else {
			rules = append(rules, *rule)
		}
		return true
	})
	return rules, errs
}

// RulesFor implements the access reviews' RuleResolver
// (selfsubjectrulesreviews, kubectl auth can-i --list): every rule u holds
// in namespace, resource rules and non-resource rules apart. Errors make
// the answer incomplete.
func (a *Authorizer) RulesFor(_ context.Context, u *user.Info, namespace string) ([]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	rules, errs := a.PolicyRulesFor(u, namespace)
	resourceRules := []authorizationv1.ResourceRule{}
	nonResourceRules := []authorizationv1.NonResourceRule{}
	for _, r := range rules {
		if len(r.Resources) > 0 {
			resourceRules = append(resourceRules, authorizationv1.ResourceRule{
				Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames,
			})
		}
		if len(r.NonResourceURLs) > 0 {
			nonResourceRules = append(nonResourceRules, authorizationv1.NonResourceRule{
				Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs,
			})
		}
	}
	if len(errs) > 0 {
		return resourceRules, nonResourceRules, true, errors.New(aggregate(errs))
	}
	return resourceRules, nonResourceRules, false, nil
}

// RoleRefRules returns the rules of the role ref refers to, from a
// binding in namespace ("" for a ClusterRoleBinding).
func (a *Authorizer) RoleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	l := a.getLister()
	if l == nil {
		return nil, errNotReady
	}
	switch ref.Kind {
	case "Role":
		r, err := l.GetRole(namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		return r.Rules, nil
	case "ClusterRole":
		r, err := l.GetClusterRole(ref.Name)
		if err != nil {
			return nil, err
		}
		return r.Rules, nil
	default:
		return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
	}
}

// visitRulesFor calls visit with every rule u holds in namespace (or an
// error met), the cluster-wide ones first, until visit returns false.
func (a *Authorizer) visitRulesFor(u *user.Info, namespace string, visit func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool) {
	l := a.getLister()
	if l == nil {
		visit(nil, nil, errNotReady)
		return
	}
	crbs, err := l.ListClusterRoleBindings()
	if err != nil {
		if !visit(nil, nil, err) {
			return
		}
	}
	for _, b := range crbs {
		i, ok := appliesTo(u, b.Subjects, "")
		if !ok {
			continue
		}
		rules, err := a.RoleRefRules(b.RoleRef, "")
		if err != nil {
			if !visit(nil, nil, err) {
				return
			}
			continue
		}
		src := clusterBindingSource{b, &b.Subjects[i]}
		for j := range rules {
			if !visit(src, &rules[j], nil) {
				return
			}
		}
	}
	if namespace == "" {
		return
	}
	rbs, err := l.ListRoleBindings(namespace)
	if err != nil {
		visit(nil, nil, err)
		return
	}
	for _, b := range rbs {
		i, ok := appliesTo(u, b.Subjects, namespace)
		if !ok {
			continue
		}
		rules, err := a.RoleRefRules(b.RoleRef, namespace)
		if err != nil {
			if !visit(nil, nil, err) {
				return
			}
			continue
		}
		src := bindingSource{b, &b.Subjects[i]}
		for j := range rules {
			if !visit(src, &rules[j], nil) {
				return
			}
		}
	}
}

// appliesTo returns the index of the first subject u is, for a binding in
// namespace ("" for a ClusterRoleBinding).
func appliesTo(u *user.Info, subjects []rbacv1.Subject, namespace string) (int, bool) {
	if u == nil {
		return 0, false
	}
	for i := range subjects {
		if subjectMatches(u, &subjects[i], namespace) {
			return i, true
		}
	}
	return 0, false
}

func subjectMatches(u *user.Info, s *rbacv1.Subject, namespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return u.Name == s.Name
	case rbacv1.GroupKind:
		return u.InGroup(s.Name)
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = namespace
		}
		if ns == "" {
			return false
		}
		return u.Name == ServiceAccountUsername(ns, s.Name)
	default:
		return false
	}
}

// ServiceAccountUsername is the user name of a service account:
// system:serviceaccount:<namespace>:<name>.
func ServiceAccountUsername(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// clusterBindingSource and bindingSource describe what allowed a request,
// as upstream's describers do.
type clusterBindingSource struct {
	b *rbacv1.ClusterRoleBinding
	s *rbacv1.Subject
}

func (d clusterBindingSource) String() string {
	return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", d.b.Name, d.b.RoleRef.Kind, d.b.RoleRef.Name, describeSubject(d.s, ""))
}

type bindingSource struct {
	b *rbacv1.RoleBinding
	s *rbacv1.Subject
}

func (d bindingSource) String() string {
	return fmt.Sprintf("RoleBinding %q of %s %q to %s", d.b.Name+"/"+d.b.Namespace, d.b.RoleRef.Kind, d.b.RoleRef.Name, describeSubject(d.s, d.b.Namespace))
}

func describeSubject(s *rbacv1.Subject, namespace string) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		ns := s.Namespace
		if ns == "" {
			ns = namespace
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name)
}
