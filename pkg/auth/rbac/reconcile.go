package rbac

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kapi-dev/kapi/internal/parallel"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// Reconcile makes the bootstrap policy present through c, as upstream's
// rbac/bootstrap-roles post-start hook does: missing objects are created;
// an existing one whose rbac.authorization.kubernetes.io/autoupdate
// annotation is not "false" gets the missing labels, annotations, rules
// (or aggregation selectors) and subjects added (nothing is removed), and
// a binding whose roleRef differs is recreated. Roles and bindings in a
// namespace that does not exist are skipped with an error.
func Reconcile(ctx context.Context, c kubernetes.Interface) error {
	return ReconcileWith(ctx, c, nil)
}

// Creator writes one new object of the bootstrap policy (a ClusterRole,
// ClusterRoleBinding, Role or RoleBinding) and returns the API's error;
// the reconciler reads nothing back from a create.
type Creator func(ctx context.Context, obj runtime.Object) error

// ReconcileWith is Reconcile with the missing objects written by create
// (nil: c's typed clients). Reads, updates and a binding's recreation go
// through c.
func ReconcileWith(ctx context.Context, c kubernetes.Interface, create Creator) error {
	if create == nil {
		create = clientCreator(c)
	}
	// What exists is read with one list per kind rather than one GET per
	// object: on a restart nothing else is sent when nothing changed.
	crs, err := c.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return wrap("list", "clusterroles", err)
	}
	crbs, err := c.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return wrap("list", "clusterrolebindings", err)
	}
	rs, err := c.RbacV1().Roles(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return wrap("list", "roles", err)
	}
	rbs, err := c.RbacV1().RoleBindings(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return wrap("list", "rolebindings", err)
	}
	return reconcile(ctx, c, create, existing{
		clusterRoles:        byKey(crs.Items, func(o *rbacv1.ClusterRole) string { return o.Name }),
		clusterRoleBindings: byKey(crbs.Items, func(o *rbacv1.ClusterRoleBinding) string { return o.Name }),
		roles:               byKey(rs.Items, func(o *rbacv1.Role) string { return o.Namespace + "/" + o.Name }),
		roleBindings:        byKey(rbs.Items, func(o *rbacv1.RoleBinding) string { return o.Namespace + "/" + o.Name }),
	})
}

// ReconcileFrom is ReconcileWith reading what exists from l, the listers
// of synced informers of the four kinds, instead of listing through c:
// what it compares with is the informers' view, as of their last event
// (an object they have not seen yet is created, which fails with
// AlreadyExists and is left as it is, as when it is created between
// ReconcileWith's list and its create; an update from a stale view fails
// with a conflict). The objects of l are not changed.
func ReconcileFrom(ctx context.Context, c kubernetes.Interface, create Creator, l InformerLister) error {
	if create == nil {
		create = clientCreator(c)
	}
	crs, err := l.ClusterRoles.List(labels.Everything())
	if err != nil {
		return wrap("list", "clusterroles", err)
	}
	crbs, err := l.ClusterRoleBindings.List(labels.Everything())
	if err != nil {
		return wrap("list", "clusterrolebindings", err)
	}
	rs, err := l.Roles.List(labels.Everything())
	if err != nil {
		return wrap("list", "roles", err)
	}
	rbs, err := l.RoleBindings.List(labels.Everything())
	if err != nil {
		return wrap("list", "rolebindings", err)
	}
	return reconcile(ctx, c, create, existing{
		clusterRoles:        byKeyPtr(crs, func(o *rbacv1.ClusterRole) string { return o.Name }),
		clusterRoleBindings: byKeyPtr(crbs, func(o *rbacv1.ClusterRoleBinding) string { return o.Name }),
		roles:               byKeyPtr(rs, func(o *rbacv1.Role) string { return o.Namespace + "/" + o.Name }),
		roleBindings:        byKeyPtr(rbs, func(o *rbacv1.RoleBinding) string { return o.Namespace + "/" + o.Name }),
	})
}

// existing are the stored objects of the four kinds, by name (namespaced:
// namespace/name). The reconcilers copy an object before changing it.
type existing struct {
	clusterRoles        map[string]*rbacv1.ClusterRole
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding
	roles               map[string]*rbacv1.Role
	roleBindings        map[string]*rbacv1.RoleBinding
}

func reconcile(ctx context.Context, c kubernetes.Interface, create Creator, ex existing) error {
	var work []func() error
	for _, want := range ClusterRoles() {
		have := ex.clusterRoles[want.Name]
		work = append(work, func() error { return reconcileClusterRole(ctx, c, create, want, have) })
	}
	for _, want := range ClusterRoleBindings() {
		have := ex.clusterRoleBindings[want.Name]
		work = append(work, func() error { return reconcileClusterRoleBinding(ctx, c, create, want, have) })
	}
	for _, want := range Roles() {
		have := ex.roles[want.Namespace+"/"+want.Name]
		work = append(work, func() error { return reconcileRole(ctx, c, create, want, have) })
	}
	for _, want := range RoleBindings() {
		have := ex.roleBindings[want.Namespace+"/"+want.Name]
		work = append(work, func() error { return reconcileRoleBinding(ctx, c, create, want, have) })
	}
	return errors.Join(parallel.Run(reconcileWorkers, work)...)
}

// clientCreator creates through c's typed clients.
func clientCreator(c kubernetes.Interface) Creator {
	return func(ctx context.Context, obj runtime.Object) error {
		var err error
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			_, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("rbac bootstrap: cannot create a %T", obj)
		}
		return err
	}
}

// byKey indexes items by key.
func byKey[T any](items []T, key func(*T) string) map[string]*T {
	out := make(map[string]*T, len(items))
	for i := range items {
		out[key(&items[i])] = &items[i]
	}
	return out
}

// byKeyPtr indexes items by key.
func byKeyPtr[T any](items []*T, key func(*T) string) map[string]*T {
	out := make(map[string]*T, len(items))
	for _, it := range items {
		out[key(it)] = it
	}
	return out
}

// reconcileWorkers is how many objects Reconcile works on at a time. Each
// object is independent of the others (a role and its binding may be
// written in either order, as upstream's aggregation and authorizer
// tolerate), and one at a time the ~130 objects' round trips dominated
// the server's start (readiness waits for this hook).
const reconcileWorkers = 8

func autoupdate(m metav1.Object) bool {
	return m.GetAnnotations()[AutoUpdateAnnotationKey] != "false"
}

// mergeMeta adds want's labels and annotations missing from have; it
// reports a change.
func mergeMeta(have, want metav1.Object) bool {
	changed := false
	merge := func(h, w map[string]string, set func(map[string]string)) {
		if h == nil && len(w) > 0 {
			h = map[string]string{}
		}
		for k, v := range w {
			if _, ok := h[k]; !ok {
				h[k] = v
				changed = true
			}
		}
		set(h)
	}
	merge(have.GetLabels(), want.GetLabels(), have.SetLabels)
	merge(have.GetAnnotations(), want.GetAnnotations(), have.SetAnnotations)
	return changed
}

// metaMissing reports whether want has a label or annotation key that
// have lacks (what mergeMeta would add), without changing have.
func metaMissing(have, want metav1.Object) bool {
	hl, ha := have.GetLabels(), have.GetAnnotations()
	for k := range want.GetLabels() {
		if _, ok := hl[k]; !ok {
			return true
		}
	}
	for k := range want.GetAnnotations() {
		if _, ok := ha[k]; !ok {
			return true
		}
	}
	return false
}

// rulesCovered reports whether have's rules cover want's (nothing for
// addMissingRules to add). Stored bootstrap rules are usually want's
// exactly, which is checked first: Covers breaks every rule down.
func rulesCovered(have, want []rbacv1.PolicyRule) bool {
	if sameRules(have, want) {
		return true
	}
	ok, _ := Covers(have, want)
	return ok
}

// hasSubjects reports whether have holds every subject of want.
func hasSubjects(have, want []rbacv1.Subject) bool {
	for _, s := range want {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

// clusterRoleCurrent reports whether reconcileClusterRole would leave have
// as it is: every label, annotation and aggregation selector of want is
// there, and (not aggregated) its rules cover want's. It changes nothing,
// so that a current object, on every restart, is neither copied nor
// written.
func clusterRoleCurrent(have, want *rbacv1.ClusterRole) bool {
	if metaMissing(have, want) {
		return false
	}
	if want.AggregationRule != nil {
		for _, s := range want.AggregationRule.ClusterRoleSelectors {
			if have.AggregationRule == nil || !slices.ContainsFunc(have.AggregationRule.ClusterRoleSelectors, func(h metav1.LabelSelector) bool { return equality.Semantic.DeepEqual(h, s) }) {
				return false
			}
		}
		return true
	}
	return rulesCovered(have.Rules, want.Rules)
}

// mergeClusterRole adds to have what want has and have lacks (labels,
// annotations, aggregation selectors or, not aggregated, rules); it
// reports a change.
func mergeClusterRole(have, want *rbacv1.ClusterRole) bool {
	changed := mergeMeta(have, want)
	if want.AggregationRule != nil {
		// The aggregation controller owns an aggregated role's rules.
		if have.AggregationRule == nil {
			have.AggregationRule = &rbacv1.AggregationRule{}
		}
		for _, s := range want.AggregationRule.ClusterRoleSelectors {
			if !slices.ContainsFunc(have.AggregationRule.ClusterRoleSelectors, func(h metav1.LabelSelector) bool { return equality.Semantic.DeepEqual(h, s) }) {
				have.AggregationRule.ClusterRoleSelectors = append(have.AggregationRule.ClusterRoleSelectors, s)
				changed = true
			}
		}
		return changed
	}
	var added bool
	have.Rules, added = addMissingRules(have.Rules, want.Rules)
	return changed || added
}

// addMissingRules appends to have the rules of want it does not cover.
func addMissingRules(have, want []rbacv1.PolicyRule) ([]rbacv1.PolicyRule, bool) {
	ok, missing := Covers(have, want)
	if ok {
		return have, false
	}
	return append(have, compact(missing)...), true
}

func reconcileClusterRole(ctx context.Context, c kubernetes.Interface, create Creator, want rbacv1.ClusterRole, have *rbacv1.ClusterRole) error {
	api := c.RbacV1().ClusterRoles()
	if have == nil {
		err := create(ctx, &want)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return wrap("create clusterrole", want.Name, err)
	}
	if !autoupdate(have) || clusterRoleCurrent(have, &want) {
		return nil
	}
	have = have.DeepCopy()
	changed := mergeClusterRole(have, &want)
	if !changed {
		return nil
	}
	_, err := api.Update(ctx, have, metav1.UpdateOptions{})
	return wrap("update clusterrole", want.Name, err)
}

func reconcileRole(ctx context.Context, c kubernetes.Interface, create Creator, want rbacv1.Role, have *rbacv1.Role) error {
	api := c.RbacV1().Roles(want.Namespace)
	if have == nil {
		err := create(ctx, &want)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return wrap("create role", want.Namespace+"/"+want.Name, err)
	}
	if !autoupdate(have) || (!metaMissing(have, &want) && rulesCovered(have.Rules, want.Rules)) {
		return nil
	}
	have = have.DeepCopy()
	changed := mergeMeta(have, &want)
	var added bool
	have.Rules, added = addMissingRules(have.Rules, want.Rules)
	if !changed && !added {
		return nil
	}
	_, err := api.Update(ctx, have, metav1.UpdateOptions{})
	return wrap("update role", want.Namespace+"/"+want.Name, err)
}

// addMissingSubjects appends to have the subjects of want it lacks.
func addMissingSubjects(have, want []rbacv1.Subject) ([]rbacv1.Subject, bool) {
	changed := false
	for _, s := range want {
		if !slices.Contains(have, s) {
			have = append(have, s)
			changed = true
		}
	}
	return have, changed
}

func reconcileClusterRoleBinding(ctx context.Context, c kubernetes.Interface, create Creator, want rbacv1.ClusterRoleBinding, have *rbacv1.ClusterRoleBinding) error {
	api := c.RbacV1().ClusterRoleBindings()
	if have == nil {
		err := create(ctx, &want)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return wrap("create clusterrolebinding", want.Name, err)
	}
	if !autoupdate(have) || (have.RoleRef == want.RoleRef && !metaMissing(have, &want) && hasSubjects(have.Subjects, want.Subjects)) {
		return nil
	}
	have = have.DeepCopy()
	if have.RoleRef != want.RoleRef {
		// roleRef is immutable: recreate, keeping the subjects.
		want.Subjects, _ = addMissingSubjects(have.Subjects, want.Subjects)
		if err := api.Delete(ctx, want.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID}}); err != nil {
			return wrap("delete clusterrolebinding", want.Name, err)
		}
		_, err := api.Create(ctx, &want, metav1.CreateOptions{})
		return wrap("recreate clusterrolebinding", want.Name, err)
	}
	changed := mergeMeta(have, &want)
	var added bool
	have.Subjects, added = addMissingSubjects(have.Subjects, want.Subjects)
	if !changed && !added {
		return nil
	}
	_, err := api.Update(ctx, have, metav1.UpdateOptions{})
	return wrap("update clusterrolebinding", want.Name, err)
}

func reconcileRoleBinding(ctx context.Context, c kubernetes.Interface, create Creator, want rbacv1.RoleBinding, have *rbacv1.RoleBinding) error {
	api := c.RbacV1().RoleBindings(want.Namespace)
	name := want.Namespace + "/" + want.Name
	if have == nil {
		err := create(ctx, &want)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return wrap("create rolebinding", name, err)
	}
	if !autoupdate(have) || (have.RoleRef == want.RoleRef && !metaMissing(have, &want) && hasSubjects(have.Subjects, want.Subjects)) {
		return nil
	}
	have = have.DeepCopy()
	if have.RoleRef != want.RoleRef {
		want.Subjects, _ = addMissingSubjects(have.Subjects, want.Subjects)
		if err := api.Delete(ctx, want.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID}}); err != nil {
			return wrap("delete rolebinding", name, err)
		}
		_, err := api.Create(ctx, &want, metav1.CreateOptions{})
		return wrap("recreate rolebinding", name, err)
	}
	changed := mergeMeta(have, &want)
	var added bool
	have.Subjects, added = addMissingSubjects(have.Subjects, want.Subjects)
	if !changed && !added {
		return nil
	}
	_, err := api.Update(ctx, have, metav1.UpdateOptions{})
	return wrap("update rolebinding", name, err)
}

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("rbac bootstrap: %s %s: %w", op, name, err)
}
