package namespace

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

type stores struct {
	main     *REST
	status   *generic.StatusREST
	finalize *FinalizeREST
}

func newStores(t *testing.T) stores {
	t.Helper()
	main, status, finalize, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(main.Destroy)
	return stores{main, status, finalize}
}

func ctx() context.Context { return registrytest.Context("", "v1", "namespaces", "") }

func (s stores) get(t *testing.T, name string) *corev1.Namespace {
	t.Helper()
	obj, err := s.main.Get(ctx(), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return obj.(*corev1.Namespace)
}

func (s stores) create(t *testing.T, ns *corev1.Namespace) *corev1.Namespace {
	t.Helper()
	obj, err := s.main.Create(ctx(), ns, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return obj.(*corev1.Namespace)
}

func TestNamespaceCreate(t *testing.T) {
	s := newStores(t)
	if s.main.NamespaceScoped() {
		t.Error("got namespaced, want cluster-scoped")
	}
	if got := s.main.ShortNames(); !slices.Equal(got, []string{"ns"}) {
		t.Errorf("got short names %v, want [ns]", got)
	}
	if got := s.main.GetSingularName(); got != "namespace" {
		t.Errorf("got singular %q, want namespace", got)
	}

	ns := s.create(t, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "team-", Labels: map[string]string{corev1.LabelMetadataName: "spoofed"}},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/x"}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
	})
	if ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("got phase %q, want Active", ns.Status.Phase)
	}
	if got, want := ns.Spec.Finalizers, []corev1.FinalizerName{"example.com/x", corev1.FinalizerKubernetes}; !slices.Equal(got, want) {
		t.Errorf("got finalizers %v, want %v", got, want)
	}
	if !strings.HasPrefix(ns.Name, "team-") || ns.Labels[corev1.LabelMetadataName] != ns.Name {
		t.Errorf("got name %q label %q, want a generated name and the label equal to it", ns.Name, ns.Labels[corev1.LabelMetadataName])
	}

	cases := []struct {
		name string
		ns   *corev1.Namespace
		want []string
	}{
		{"not a dns label", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}, []string{"FieldValueInvalid metadata.name"}},
		{"bad spec finalizer", &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: "x"},
			Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"mine"}},
		}, []string{"FieldValueInvalid spec.finalizers"}},
		{"bad metadata finalizer", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "y", Finalizers: []string{"mine"}}},
			[]string{"FieldValueInvalid metadata.finalizers[0]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.main.Create(ctx(), tc.ns, nil, &metav1.CreateOptions{})
			if got := registrytest.Causes(t, err); !slices.Equal(got, tc.want) {
				t.Errorf("got causes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNamespaceSubresources(t *testing.T) {
	s := newStores(t)
	s.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})

	// The main resource changes neither status nor spec.finalizers.
	_, _, err := s.main.Update(ctx(), "team", registrytest.Mutated{Mutate: func(o runtime.Object) {
		ns := o.(*corev1.Namespace)
		ns.Labels["tier"] = "gold"
		ns.Spec.Finalizers = nil
		ns.Status.Phase = corev1.NamespaceTerminating
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	ns := s.get(t, "team")
	if ns.Labels["tier"] != "gold" || ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 {
		t.Errorf("got labels %v phase %q finalizers %v, want the label set and phase and finalizers kept", ns.Labels, ns.Status.Phase, ns.Spec.Finalizers)
	}

	// /status: Terminating without deletionTimestamp is invalid, and the
	// spec is kept.
	_, _, err = s.status.Update(ctx(), "team", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*corev1.Namespace).Status.Phase = corev1.NamespaceTerminating
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid status.Phase"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	_, _, err = s.status.Update(ctx(), "team", registrytest.Mutated{Mutate: func(o runtime.Object) {
		ns := o.(*corev1.Namespace)
		ns.Spec.Finalizers = nil
		ns.Status.Conditions = []corev1.NamespaceCondition{{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionFalse}}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	ns = s.get(t, "team")
	if len(ns.Status.Conditions) != 1 || len(ns.Spec.Finalizers) != 1 {
		t.Errorf("got conditions %v finalizers %v, want the condition set and the finalizers kept", ns.Status.Conditions, ns.Spec.Finalizers)
	}

	// /finalize changes spec.finalizers, not the status.
	_, _, err = s.finalize.Update(ctx(), "team", registrytest.Mutated{Mutate: func(o runtime.Object) {
		ns := o.(*corev1.Namespace)
		ns.Spec.Finalizers = []corev1.FinalizerName{"example.com/a", corev1.FinalizerKubernetes}
		ns.Status.Conditions = nil
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("finalize: %v", err)
	}
	ns = s.get(t, "team")
	if len(ns.Spec.Finalizers) != 2 || len(ns.Status.Conditions) != 1 {
		t.Errorf("got finalizers %v conditions %v, want 2 finalizers and the condition kept", ns.Spec.Finalizers, ns.Status.Conditions)
	}
	_, _, err = s.finalize.Update(ctx(), "team", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*corev1.Namespace).Spec.Finalizers = []corev1.FinalizerName{"bad"}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid spec.finalizers[0]"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
}

func TestNamespaceDeletion(t *testing.T) {
	s := newStores(t)
	s.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})

	// A dry run changes nothing.
	obj, deleted, err := s.main.Delete(ctx(), "team", nil, &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || deleted || obj.(*corev1.Namespace).Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("dry-run delete: deleted=%v err=%v, want a Terminating namespace", deleted, err)
	}
	if ns := s.get(t, "team"); ns.DeletionTimestamp != nil || ns.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("got %v %q after a dry run, want the namespace unchanged", ns.DeletionTimestamp, ns.Status.Phase)
	}

	// A wrong uid precondition is a conflict.
	wrong := metav1.NewUIDPreconditions("nope")
	_, _, err = s.main.Delete(ctx(), "team", nil, &metav1.DeleteOptions{Preconditions: wrong})
	if !apierrors.IsConflict(err) {
		t.Errorf("got %v, want Conflict for a wrong uid", err)
	}

	// The first delete marks it Terminating; it stays.
	var validated []string
	validate := func(_ context.Context, obj runtime.Object) error {
		validated = append(validated, obj.(*corev1.Namespace).Name)
		return nil
	}
	obj, deleted, err = s.main.Delete(ctx(), "team", validate, nil)
	if err != nil || deleted {
		t.Fatalf("delete: deleted=%v err=%v, want marked", deleted, err)
	}
	ns := obj.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("got deletionTimestamp %v phase %q, want set and Terminating", ns.DeletionTimestamp, ns.Status.Phase)
	}
	if !slices.Equal(validated, []string{"team"}) {
		t.Errorf("got admission calls %v, want one for team", validated)
	}
	list, err := s.main.List(ctx(), &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.phase", "Terminating")})
	if err != nil {
		t.Fatal(err)
	}
	if items := list.(*corev1.NamespaceList).Items; len(items) != 1 || items[0].Name != "team" {
		t.Errorf("got %d terminating namespaces, want team", len(items))
	}

	// While spec.finalizers is not empty, deletes answer the namespace.
	obj, deleted, err = s.main.Delete(ctx(), "team", nil, nil)
	if err != nil || deleted || obj.(*corev1.Namespace).Name != "team" {
		t.Fatalf("second delete: deleted=%v err=%v, want the namespace kept", deleted, err)
	}
	// The phase cannot go back to Active while deleting.
	_, _, err = s.status.Update(ctx(), "team", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*corev1.Namespace).Status.Phase = corev1.NamespaceActive
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid status.Phase"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	// Emptying spec.finalizers through /finalize deletes it.
	_, _, err = s.finalize.Update(ctx(), "team", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*corev1.Namespace).Spec.Finalizers = nil
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := s.main.Get(ctx(), "team", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("got %v after finalizing, want NotFound", err)
	}
}

func TestNamespaceDeletionWaitsForMetadataFinalizers(t *testing.T) {
	s := newStores(t)
	s.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Finalizers: []string{"example.com/hold"}}})
	orphan := metav1.DeletePropagationOrphan
	obj, _, err := s.main.Delete(ctx(), "team", nil, &metav1.DeleteOptions{PropagationPolicy: &orphan})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := obj.(*corev1.Namespace).Finalizers, []string{"example.com/hold", metav1.FinalizerOrphanDependents}; !slices.Equal(got, want) {
		t.Errorf("got finalizers %v, want %v", got, want)
	}
	// spec.finalizers emptied, metadata finalizers left: it stays.
	_, _, err = s.finalize.Update(ctx(), "team", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*corev1.Namespace).Spec.Finalizers = nil
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.get(t, "team")
	// The last metadata finalizer removed: it goes.
	_, _, err = s.main.Update(ctx(), "team", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*corev1.Namespace).Finalizers = nil
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.main.Get(ctx(), "team", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("got %v, want NotFound", err)
	}
}

func TestNamespaceTable(t *testing.T) {
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "team", CreationTimestamp: metav1.NewTime(time.Now().Add(-10 * time.Minute))},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
	}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if got, want := strings.Join(cols, ","), "Name,Status,Age"; got != want {
		t.Errorf("got columns %s, want %s", got, want)
	}
	if got, want := tbl.Rows[0].Cells, []any{"team", "Terminating", "10m"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
}

func TestDeletionFinalizers(t *testing.T) {
	orphan, fg, bg := metav1.DeletePropagationOrphan, metav1.DeletePropagationForeground, metav1.DeletePropagationBackground
	yes, no := true, false
	cases := []struct {
		name string
		have []string
		opts metav1.DeleteOptions
		want []string
	}{
		{"nothing asked", []string{"a/b"}, metav1.DeleteOptions{}, []string{"a/b"}},
		{"orphan policy", nil, metav1.DeleteOptions{PropagationPolicy: &orphan}, []string{"orphan"}},
		{"foreground policy", []string{"orphan"}, metav1.DeleteOptions{PropagationPolicy: &fg}, []string{"foregroundDeletion"}},
		{"background policy clears", []string{"orphan", "a/b"}, metav1.DeleteOptions{PropagationPolicy: &bg}, []string{"a/b"}},
		{"orphanDependents true", nil, metav1.DeleteOptions{OrphanDependents: &yes}, []string{"orphan"}},
		{"orphanDependents false", []string{"orphan"}, metav1.DeleteOptions{OrphanDependents: &no}, []string{"foregroundDeletion"}},
		{"kept order when unchanged", []string{"orphan", "a/b"}, metav1.DeleteOptions{PropagationPolicy: &orphan}, []string{"orphan", "a/b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := deletionFinalizers(tc.have, &tc.opts); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
