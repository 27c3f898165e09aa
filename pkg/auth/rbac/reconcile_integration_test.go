package rbac_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/auth/rbac"
)

// Reconcile against a real server whose bootstrap policy was changed:
// a removed rule comes back, a role marked autoupdate=false is left as it
// is, a deleted binding is made again, a binding whose roleRef differs is
// recreated keeping its extra subjects, and a second run changes nothing.
func TestReconcileRepairsPolicy(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	waitFor(t, "the bootstrap policy", func() bool { return rbac.Reconcile(ctx, cs) == nil })

	var plain []rbacv1.ClusterRole // roles with rules of their own
	for _, r := range rbac.ClusterRoles() {
		if r.AggregationRule == nil && len(r.Rules) > 1 {
			plain = append(plain, r)
		}
	}
	if len(plain) < 2 {
		t.Fatalf("want two bootstrap ClusterRoles with several rules, have %d", len(plain))
	}
	repaired, frozen := plain[0], plain[1]
	crs := cs.RbacV1().ClusterRoles()
	cut := func(name string, autoupdate string) {
		t.Helper()
		cr, err := crs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cr.Rules = cr.Rules[:1]
		cr.Annotations[rbac.AutoUpdateAnnotationKey] = autoupdate
		if _, err := crs.Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cut(repaired.Name, "true")
	cut(frozen.Name, "false")

	crb := rbac.ClusterRoleBindings()[0]
	if err := cs.RbacV1().ClusterRoleBindings().Delete(ctx, crb.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := rbac.RoleBindings()[0]
	rbs := cs.RbacV1().RoleBindings(rb.Namespace)
	if err := rbs.Delete(ctx, rb.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	extra := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "someone-else"}
	changed := rb.DeepCopy()
	changed.ResourceVersion = ""
	changed.RoleRef.Name = "some-other-role"
	changed.Subjects = append(changed.Subjects, extra)
	if _, err := rbs.Create(ctx, changed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := rbac.Reconcile(ctx, cs); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}

	got, err := crs.Get(ctx, repaired.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, missing := rbac.Covers(got.Rules, repaired.Rules); !ok {
		t.Errorf("ClusterRole %s after Reconcile lacks %+v", repaired.Name, missing)
	}
	got, err = crs.Get(ctx, frozen.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != 1 {
		t.Errorf("ClusterRole %s (autoupdate=false) has %d rules after Reconcile, want the 1 left", frozen.Name, len(got.Rules))
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, crb.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("deleted ClusterRoleBinding %s after Reconcile: %v", crb.Name, err)
	}
	gotRB, err := rbs.Get(ctx, rb.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gotRB.RoleRef != rb.RoleRef {
		t.Errorf("RoleBinding %s/%s roleRef %+v after Reconcile, want %+v", rb.Namespace, rb.Name, gotRB.RoleRef, rb.RoleRef)
	}
	want := append(append([]rbacv1.Subject(nil), rb.Subjects...), extra)
	if !equality.Semantic.DeepEqual(gotRB.Subjects, want) {
		t.Errorf("RoleBinding subjects after Reconcile: %+v, want %+v", gotRB.Subjects, want)
	}

	// Nothing left to do: a second run writes nothing.
	before, err := crs.Get(ctx, repaired.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rbac.Reconcile(ctx, cs); err != nil {
		t.Fatalf("second Reconcile: %v", err)
	}
	after, err := crs.Get(ctx, repaired.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("second Reconcile rewrote ClusterRole %s (resourceVersion %s -> %s)", repaired.Name, before.ResourceVersion, after.ResourceVersion)
	}
}

// ReconcileWith writes exactly the missing objects through its Creator
// (the rest of the policy is read and left alone), and an AlreadyExists
// from it counts as done, as from the typed client.
func TestReconcileWithCreator(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	waitFor(t, "the bootstrap policy", func() bool { return rbac.Reconcile(ctx, cs) == nil })
	cr, rb := rbac.ClusterRoles()[0], rbac.RoleBindings()[0]
	if err := cs.RbacV1().ClusterRoles().Delete(ctx, cr.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.RbacV1().RoleBindings(rb.Namespace).Delete(ctx, rb.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var created []string
	create := func(ctx context.Context, obj runtime.Object) error {
		mu.Lock()
		defer mu.Unlock()
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			created = append(created, "ClusterRole "+o.Name)
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			return err
		case *rbacv1.RoleBinding:
			created = append(created, "RoleBinding "+o.Namespace+"/"+o.Name)
			// Created by someone else meanwhile: the reconciler takes it.
			if _, err := cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
				return err
			}
			return apierrors.NewAlreadyExists(rbacv1.Resource("rolebindings"), o.Name)
		default:
			created = append(created, fmt.Sprintf("%T", obj))
			return nil
		}
	}
	if err := rbac.ReconcileWith(ctx, cs, create); err != nil {
		t.Fatalf("ReconcileWith: %v", err)
	}
	sort.Strings(created)
	want := []string{"ClusterRole " + cr.Name, "RoleBinding " + rb.Namespace + "/" + rb.Name}
	if !slices.Equal(created, want) {
		t.Fatalf("created through the Creator: %q, want %q", created, want)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, cr.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("ClusterRole %s after ReconcileWith: %v", cr.Name, err)
	}
}

// ReconcileFrom compares with the informers' view: a ClusterRole the
// informer saw deleted is created through the Creator, one it saw cut is
// repaired, the informers' objects are not changed, and once the informer
// has seen the repairs a second run writes nothing.
func TestReconcileFromInformers(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	factory := informers.NewSharedInformerFactory(cs, 0)
	lister := rbac.NewInformerLister(factory)
	factory.Start(ctx.Done())
	t.Cleanup(factory.Shutdown)
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}

	var plain []rbacv1.ClusterRole
	for _, r := range rbac.ClusterRoles() {
		if r.AggregationRule == nil && len(r.Rules) > 1 {
			plain = append(plain, r)
		}
	}
	deleted, cut := plain[0], plain[1]
	crs := cs.RbacV1().ClusterRoles()
	if err := crs.Delete(ctx, deleted.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cr, err := crs.Get(ctx, cut.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cr.Rules = cr.Rules[:1]
	if _, err := crs.Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var seen *rbacv1.ClusterRole
	waitFor(t, "the informer to see the changes", func() bool {
		_, err := lister.ClusterRoles.Get(deleted.Name)
		seen, _ = lister.ClusterRoles.Get(cut.Name)
		return apierrors.IsNotFound(err) && seen != nil && len(seen.Rules) == 1
	})

	var mu sync.Mutex
	var created []string
	create := func(ctx context.Context, obj runtime.Object) error {
		mu.Lock()
		created = append(created, fmt.Sprintf("%T %s", obj, obj.(metav1.Object).GetName()))
		mu.Unlock()
		_, err := crs.Create(ctx, obj.(*rbacv1.ClusterRole), metav1.CreateOptions{})
		return err
	}
	if err := rbac.ReconcileFrom(ctx, cs, create, lister); err != nil {
		t.Fatalf("ReconcileFrom: %v", err)
	}
	if want := []string{"*v1.ClusterRole " + deleted.Name}; !slices.Equal(created, want) {
		t.Fatalf("created through the Creator: %q, want %q", created, want)
	}
	if len(seen.Rules) != 1 {
		t.Errorf("the informer's ClusterRole %s was changed: %d rules", cut.Name, len(seen.Rules))
	}
	got, err := crs.Get(ctx, cut.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, missing := rbac.Covers(got.Rules, cut.Rules); !ok {
		t.Errorf("ClusterRole %s after ReconcileFrom lacks %+v", cut.Name, missing)
	}

	waitFor(t, "the informer to see the repairs", func() bool {
		a, err1 := lister.ClusterRoles.Get(deleted.Name)
		b, err2 := lister.ClusterRoles.Get(cut.Name)
		return err1 == nil && err2 == nil && a != nil && b.ResourceVersion == got.ResourceVersion
	})
	created = nil
	if err := rbac.ReconcileFrom(ctx, cs, create, lister); err != nil {
		t.Fatalf("second ReconcileFrom: %v", err)
	}
	if len(created) != 0 {
		t.Errorf("second ReconcileFrom created %q", created)
	}
	after, err := crs.Get(ctx, cut.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != got.ResourceVersion {
		t.Errorf("second ReconcileFrom rewrote ClusterRole %s (resourceVersion %s -> %s)", cut.Name, got.ResourceVersion, after.ResourceVersion)
	}
}
