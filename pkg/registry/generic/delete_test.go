package generic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

type gcPolicyStrategy struct{ policy GarbageCollectionPolicy }

func (gcPolicyStrategy) CheckGracefulDelete(context.Context, runtime.Object, *metav1.DeleteOptions) bool {
	return false
}
func (s gcPolicyStrategy) DefaultGarbageCollectionPolicy(context.Context) GarbageCollectionPolicy {
	return s.policy
}

func TestDelete(t *testing.T) {
	orphan, background, foreground := metav1.DeletePropagationOrphan, metav1.DeletePropagationBackground, metav1.DeletePropagationForeground
	cases := []struct {
		name       string
		finalizers []string
		mod        func(*Store)
		options    func(cur *corev1.ConfigMap) *metav1.DeleteOptions
		code       int32
		reason     metav1.StatusReason
		msg        string
		deleted    bool
		// the object's finalizers after the delete (when it stays)
		wantFinalizers []string
	}{
		{name: "background by default", deleted: true},
		{name: "nil options delete at once", options: func(*corev1.ConfigMap) *metav1.DeleteOptions { return nil }, deleted: true},
		{
			name: "background",
			options: func(*corev1.ConfigMap) *metav1.DeleteOptions {
				return &metav1.DeleteOptions{PropagationPolicy: &background}
			},
			deleted: true,
		},
		{
			name: "orphan adds the orphan finalizer",
			options: func(*corev1.ConfigMap) *metav1.DeleteOptions {
				return &metav1.DeleteOptions{PropagationPolicy: &orphan}
			},
			wantFinalizers: []string{"orphan"},
		},
		{
			name: "foreground adds foregroundDeletion",
			options: func(*corev1.ConfigMap) *metav1.DeleteOptions {
				return &metav1.DeleteOptions{PropagationPolicy: &foreground}
			},
			wantFinalizers: []string{"foregroundDeletion"},
		},
		{
			name: "legacy orphanDependents",
			options: func(*corev1.ConfigMap) *metav1.DeleteOptions {
				return &metav1.DeleteOptions{OrphanDependents: ptr(true)}
			},
			wantFinalizers: []string{"orphan"},
		},
		{
			name:           "finalizers hold the object",
			finalizers:     []string{"example.com/hold"},
			wantFinalizers: []string{"example.com/hold"},
		},
		{
			name:       "background removes an orphan finalizer",
			finalizers: []string{"orphan"},
			options: func(*corev1.ConfigMap) *metav1.DeleteOptions {
				return &metav1.DeleteOptions{PropagationPolicy: &background}
			},
			deleted: true,
		},
		{
			name:           "default policy OrphanDependents",
			mod:            func(s *Store) { s.DeleteStrategy = gcPolicyStrategy{OrphanDependents} },
			wantFinalizers: []string{"orphan"},
		},
		{
			name: "unsupported policy ignores propagation",
			mod:  func(s *Store) { s.DeleteStrategy = gcPolicyStrategy{Unsupported} },
			options: func(*corev1.ConfigMap) *metav1.DeleteOptions {
				return &metav1.DeleteOptions{PropagationPolicy: &foreground}
			},
			deleted: true,
		},
		{
			name: "uid precondition",
			options: func(*corev1.ConfigMap) *metav1.DeleteOptions {
				uid := types.UID("other")
				return &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
			},
			code: http.StatusConflict, reason: metav1.StatusReasonConflict,
		},
		{
			name: "resourceVersion precondition",
			options: func(cur *corev1.ConfigMap) *metav1.DeleteOptions {
				rv := "999"
				return &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}
			},
			code: http.StatusConflict, reason: metav1.StatusReasonConflict,
			msg: `Operation cannot be fulfilled on ConfigMap "foo": the ResourceVersion in the precondition (999) does not match the ResourceVersion in record (1). The object might have been modified`,
		},
		{
			name: "matching preconditions",
			options: func(cur *corev1.ConfigMap) *metav1.DeleteOptions {
				return &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}}
			},
			deleted: true,
		},
		{
			name: "matching preconditions with finalizers",
			options: func(cur *corev1.ConfigMap) *metav1.DeleteOptions {
				return &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}}
			},
			finalizers:     []string{"example.com/hold"},
			wantFinalizers: []string{"example.com/hold"},
		},
		{
			name: "invalid options",
			options: func(*corev1.ConfigMap) *metav1.DeleteOptions {
				return &metav1.DeleteOptions{OrphanDependents: ptr(true), PropagationPolicy: &orphan}
			},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
			msg: `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mods := []func(*Store){}
			if tc.mod != nil {
				mods = append(mods, tc.mod)
			}
			s := newConfigMapStore(t, newBackend(t), mods...)
			ctx := nsCtx("ns")
			obj := configMap("foo", nil)
			obj.Finalizers = tc.finalizers
			cur := mustCreate(t, s, ctx, obj)
			opts := &metav1.DeleteOptions{}
			if tc.options != nil {
				opts = tc.options(cur)
			}
			out, deleted, err := s.Delete(ctx, "foo", nil, opts)
			if tc.code != 0 {
				wantStatus(t, err, tc.code, tc.reason, tc.msg)
				if _, err := s.Get(ctx, "foo", &metav1.GetOptions{}); err != nil {
					t.Errorf("get after a failed delete: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("delete: %v", err)
			}
			if deleted != tc.deleted {
				t.Errorf("got deleted %v, want %v", deleted, tc.deleted)
			}
			stored, getErr := s.Get(ctx, "foo", &metav1.GetOptions{})
			if tc.deleted {
				status, ok := out.(*metav1.Status)
				want := &metav1.StatusDetails{Name: "foo", Kind: "configmaps", UID: cur.UID}
				if !ok || status.Status != metav1.StatusSuccess || !reflect.DeepEqual(status.Details, want) {
					t.Errorf("got %#v, want Status Success with details %+v", out, want)
				}
				if !apierrors.IsNotFound(getErr) {
					t.Errorf("got %v, want NotFound after delete", getErr)
				}
				return
			}
			got := out.(*corev1.ConfigMap)
			if got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 0 {
				t.Errorf("got deletionTimestamp %v grace %v, want set and 0", got.DeletionTimestamp, got.DeletionGracePeriodSeconds)
			}
			if !slices.Equal(got.Finalizers, tc.wantFinalizers) {
				t.Errorf("got finalizers %v, want %v", got.Finalizers, tc.wantFinalizers)
			}
			if getErr != nil || !reflect.DeepEqual(stored.(*corev1.ConfigMap), got) {
				t.Errorf("got stored %v (%v), want the returned marked object", stored, getErr)
			}
		})
	}
}

func TestDeleteErrors(t *testing.T) {
	s := newConfigMapStore(t, newBackend(t))
	ctx := nsCtx("ns")
	_, _, err := s.Delete(ctx, "missing", nil, &metav1.DeleteOptions{})
	wantStatus(t, err, http.StatusNotFound, metav1.StatusReasonNotFound, `configmaps "missing" not found`)

	cur := mustCreate(t, s, ctx, configMap("foo", nil))
	uid := types.UID("other")
	_, _, err = s.Delete(ctx, "foo", nil, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	wantStatus(t, err, http.StatusConflict, metav1.StatusReasonConflict, fmt.Sprintf(
		`Operation cannot be fulfilled on ConfigMap "foo": the UID in the precondition (other) does not match the UID in record (%s). The object might have been deleted and then recreated`, cur.UID))

	denied := errors.New("not allowed")
	_, _, err = s.Delete(ctx, "foo", func(context.Context, runtime.Object) error { return denied }, &metav1.DeleteOptions{})
	if !errors.Is(err, denied) {
		t.Errorf("got %v, want the validation error", err)
	}
	if _, err := s.Get(ctx, "foo", &metav1.GetOptions{}); err != nil {
		t.Errorf("get after a refused delete: %v", err)
	}
	_, _, err = s.Delete(ctx, "", nil, &metav1.DeleteOptions{})
	wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "Name parameter required.")
	_, _, err = s.Delete(nsCtx(""), "foo", nil, &metav1.DeleteOptions{})
	wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "Namespace parameter required.")
}

func TestDeleteReturnsDeletedObject(t *testing.T) {
	b := newBackend(t)
	s := newConfigMapStore(t, b, func(s *Store) { s.ReturnDeletedObject = true })
	ctx := nsCtx("ns")
	cur := mustCreate(t, s, ctx, configMap("foo", map[string]string{"k": "v"}))
	out, deleted, err := s.Delete(ctx, "foo", nil, &metav1.DeleteOptions{})
	if err != nil || !deleted {
		t.Fatalf("delete: %v, %v", deleted, err)
	}
	got := out.(*corev1.ConfigMap)
	if got.UID != cur.UID || got.Data["k"] != "v" || got.ResourceVersion != fmt.Sprint(b.Revision()) {
		t.Errorf("got %+v, want the deleted object at the delete's revision %d", got, b.Revision())
	}
}

func TestFinalizerFlow(t *testing.T) {
	b := newBackend(t)
	s := newConfigMapStore(t, b)
	ctx := nsCtx("ns")
	obj := configMap("foo", nil)
	obj.Finalizers = []string{"example.com/a", "example.com/b"}
	mustCreate(t, s, ctx, obj)

	out, deleted, err := s.Delete(ctx, "foo", nil, &metav1.DeleteOptions{})
	if err != nil || deleted {
		t.Fatalf("got deleted %v err %v, want marked", deleted, err)
	}
	marked := out.(*corev1.ConfigMap)
	rev := b.Revision()

	// Deleting again changes nothing.
	out, deleted, err = s.Delete(ctx, "foo", nil, &metav1.DeleteOptions{})
	if err != nil || deleted || !out.(*corev1.ConfigMap).DeletionTimestamp.Equal(marked.DeletionTimestamp) {
		t.Fatalf("second delete: got %v %v, want the same marked object", deleted, err)
	}
	if b.Revision() != rev {
		t.Errorf("got revision %d after a second delete, want %d", b.Revision(), rev)
	}
	// No finalizer can be added while deleting.
	_, _, err = s.Update(ctx, "foo", modify(func(c *corev1.ConfigMap) {
		c.Finalizers = append(c.Finalizers, "example.com/c")
	}), nil, nil, false, &metav1.UpdateOptions{})
	wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	// An update cannot clear the deletion marks.
	out, _, err = s.Update(ctx, "foo", modify(func(c *corev1.ConfigMap) {
		c.DeletionTimestamp = nil
		c.DeletionGracePeriodSeconds = nil
		c.Finalizers = []string{"example.com/b"}
	}), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("remove one finalizer: %v", err)
	}
	if got := out.(*corev1.ConfigMap); got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil {
		t.Errorf("got %+v, want the deletion marks kept", got.ObjectMeta)
	}
	// A dry run removing the last one does not delete.
	_, _, err = s.Update(ctx, "foo", modify(func(c *corev1.ConfigMap) { c.Finalizers = nil }), nil, nil, false,
		&metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run remove last finalizer: %v", err)
	}
	if _, err := s.Get(ctx, "foo", &metav1.GetOptions{}); err != nil {
		t.Fatalf("get after dry run: %v", err)
	}
	// Removing the last one deletes.
	out, created, err := s.Update(ctx, "foo", modify(func(c *corev1.ConfigMap) { c.Finalizers = nil }), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil || created {
		t.Fatalf("remove last finalizer: %v %v", created, err)
	}
	if got := out.(*corev1.ConfigMap); got.Name != "foo" || len(got.Finalizers) != 0 {
		t.Errorf("got %+v, want the updated object", got.ObjectMeta)
	}
	if _, err := s.Get(ctx, "foo", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("got %v, want NotFound once the last finalizer is gone", err)
	}
}

func TestDeleteDryRun(t *testing.T) {
	b := newBackend(t)
	s := newConfigMapStore(t, b)
	ctx := nsCtx("ns")
	mustCreate(t, s, ctx, configMap("plain", nil))
	held := configMap("held", nil)
	held.Finalizers = []string{"example.com/hold"}
	mustCreate(t, s, ctx, held)
	rev := b.Revision()
	dry := &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}

	out, deleted, err := s.Delete(ctx, "plain", nil, dry)
	if err != nil || !deleted {
		t.Fatalf("dry-run delete: %v %v", deleted, err)
	}
	if _, ok := out.(*metav1.Status); !ok {
		t.Errorf("got %T, want a Status", out)
	}
	out, deleted, err = s.Delete(ctx, "held", nil, dry)
	if err != nil || deleted || out.(*corev1.ConfigMap).DeletionTimestamp == nil {
		t.Fatalf("dry-run delete with finalizers: got %v %v, want the marked object", deleted, err)
	}
	for _, name := range []string{"plain", "held"} {
		got, err := s.Get(ctx, name, &metav1.GetOptions{})
		if err != nil || got.(*corev1.ConfigMap).DeletionTimestamp != nil {
			t.Errorf("%s after dry run: %v, want unchanged", name, err)
		}
	}
	if b.Revision() != rev {
		t.Errorf("got revision %d, want %d after dry runs", b.Revision(), rev)
	}
}

func TestGracefulDelete(t *testing.T) {
	s := newPodStore(t, newBackend(t))
	ctx := nsCtx("ns")
	mustCreate(t, s, ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}})

	before := time.Now()
	out, deleted, err := s.Delete(ctx, "p", nil, &metav1.DeleteOptions{})
	if err != nil || deleted {
		t.Fatalf("graceful delete: got %v %v, want marked", deleted, err)
	}
	p := out.(*corev1.Pod)
	if g := p.DeletionGracePeriodSeconds; g == nil || *g != 30 {
		t.Errorf("got grace %v, want 30", g)
	}
	if ts := p.DeletionTimestamp; ts == nil || ts.Time.Before(before.Add(29*time.Second)) {
		t.Errorf("got deletionTimestamp %v, want about now+30s", ts)
	}
	// A longer grace period does not extend it.
	out, deleted, err = s.Delete(ctx, "p", nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(60))})
	if err != nil || deleted || *out.(*corev1.Pod).DeletionGracePeriodSeconds != 30 {
		t.Fatalf("longer grace: got %v %v, want unchanged", deleted, err)
	}
	// A shorter one shortens it.
	out, deleted, err = s.Delete(ctx, "p", nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(10))})
	if err != nil || deleted {
		t.Fatalf("shorter grace: %v %v", deleted, err)
	}
	if got := out.(*corev1.Pod); *got.DeletionGracePeriodSeconds != 10 || got.DeletionTimestamp.Sub(p.DeletionTimestamp.Time) != -20*time.Second {
		t.Errorf("got grace %d at %v, want 10 at 20s earlier than %v", *got.DeletionGracePeriodSeconds, got.DeletionTimestamp, p.DeletionTimestamp)
	}
	// Zero deletes.
	_, deleted, err = s.Delete(ctx, "p", nil, &metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
	if err != nil || !deleted {
		t.Fatalf("zero grace: got %v %v, want deleted", deleted, err)
	}
	if _, err := s.Get(ctx, "p", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("got %v, want NotFound", err)
	}
}

func TestDeleteCollection(t *testing.T) {
	cases := []struct {
		name     string
		pageSize int64
		workers  int
		limit    int64
		want     []string
	}{
		{name: "one page", pageSize: DefaultDeleteCollectionPageSize, workers: 1, want: []string{"a1", "a2", "a3", "a4"}},
		{name: "several pages, parallel", pageSize: 1, workers: 3, want: []string{"a1", "a2", "a3", "a4"}},
		{name: "request limit: first page only", pageSize: DefaultDeleteCollectionPageSize, workers: 2, limit: 2, want: []string{"a1", "a2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			deleteCollectionPageSize = tc.pageSize
			t.Cleanup(func() { deleteCollectionPageSize = DefaultDeleteCollectionPageSize })
			s := newConfigMapStore(t, newBackend(t), func(s *Store) { s.DeleteCollectionWorkers = tc.workers })
			ctx := nsCtx("ns")
			for _, n := range []string{"a1", "a2", "a3", "a4", "b1", "b2"} {
				o := configMap(n, nil)
				o.Labels = map[string]string{"group": n[:1]}
				mustCreate(t, s, ctx, o)
			}
			mustCreate(t, s, nsCtx("other"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a9", Labels: map[string]string{"group": "a"}}})
			out, err := s.DeleteCollection(ctx, nil, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{
				LabelSelector: labels.SelectorFromSet(labels.Set{"group": "a"}), Limit: tc.limit})
			if err != nil {
				t.Fatalf("delete collection: %v", err)
			}
			if got := names(out.(*corev1.ConfigMapList).Items); !slices.Equal(got, tc.want) {
				t.Errorf("got deleted %v, want %v", got, tc.want)
			}
			left, err := s.List(nsCtx(""), &metainternalversion.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			want := []string{"b1", "b2", "a9"}
			if tc.limit > 0 {
				want = append(slices.Clone(tc.want[:0]), "a3", "a4", "b1", "b2", "a9")
			}
			got := names(left.(*corev1.ConfigMapList).Items)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got left %v, want %v", got, want)
			}
		})
	}
}

func TestDeleteCollectionStopsOnError(t *testing.T) {
	s := newConfigMapStore(t, newBackend(t), func(s *Store) { s.DeleteCollectionWorkers = 2 })
	ctx := nsCtx("ns")
	for i := range 5 {
		mustCreate(t, s, ctx, configMap(fmt.Sprintf("c%d", i), nil))
	}
	denied := errors.New("denied")
	_, err := s.DeleteCollection(ctx, func(_ context.Context, obj runtime.Object) error {
		if obj.(*corev1.ConfigMap).Name == "c2" {
			return denied
		}
		return nil
	}, &metav1.DeleteOptions{}, nil)
	if !errors.Is(err, denied) {
		t.Fatalf("got %v, want the validation error", err)
	}
	if _, err := s.Get(ctx, "c2", &metav1.GetOptions{}); err != nil {
		t.Errorf("got %v, want c2 kept", err)
	}
}

func names(items []corev1.ConfigMap) []string {
	var out []string
	for _, i := range items {
		out = append(out, i.Name)
	}
	return out
}
