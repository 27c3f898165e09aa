package generic

import (
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

func TestUpdate(t *testing.T) {
	cases := []struct {
		name     string
		strategy configMapStrategy
		key      string // name on the "URL" (default foo)
		info     func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo
		force    bool
		code     int32
		reason   metav1.StatusReason
		msg      string
		fields   []string
		created  bool
		check    func(t *testing.T, cur, got *corev1.ConfigMap)
	}{
		{
			name: "update with the current resourceVersion",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				o.Data = map[string]string{"k": "v2"}
				return replace(o)
			},
			check: func(t *testing.T, cur, got *corev1.ConfigMap) {
				if got.Data["k"] != "v2" || got.ResourceVersion == cur.ResourceVersion {
					t.Errorf("got data %v rv %s, want v2 and a new resourceVersion", got.Data, got.ResourceVersion)
				}
			},
		},
		{
			name: "stale resourceVersion",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				o.ResourceVersion = "999"
				return replace(o)
			},
			code: http.StatusConflict, reason: metav1.StatusReasonConflict,
			msg: `Operation cannot be fulfilled on configmaps "foo": the object has been modified; please apply your changes to the latest version and try again`,
		},
		{
			name: "missing resourceVersion",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				o.ResourceVersion = ""
				return replace(o)
			},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
			msg: `configmaps "foo" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
		},
		{
			name: "unconditional update", strategy: configMapStrategy{unconditional: true},
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				o.ResourceVersion = ""
				o.Data = map[string]string{"k": "v3"}
				return replace(o)
			},
			check: func(t *testing.T, _, got *corev1.ConfigMap) {
				if got.Data["k"] != "v3" {
					t.Errorf("got data %v, want v3", got.Data)
				}
			},
		},
		{
			name: "uid precondition",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				i := replace(cur)
				uid := types.UID("other")
				i.pre = &metav1.Preconditions{UID: &uid}
				return i
			},
			code: http.StatusConflict, reason: metav1.StatusReasonConflict,
		},
		{
			name: "uid is immutable",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				o.UID = "changed"
				return replace(o)
			},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid, fields: []string{"metadata.uid"},
		},
		{
			name: "name is immutable",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				o.Name = "bar"
				return replace(o)
			},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid, fields: []string{"metadata.name"},
		},
		{
			name: "namespace mismatch",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				o.Namespace = "other"
				return replace(o)
			},
			code: http.StatusBadRequest, reason: metav1.StatusReasonBadRequest,
			msg: "the namespace of the provided object does not match the namespace sent on the request",
		},
		{
			name: "deletionTimestamp is set only by delete",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				now := metav1.Now()
				o.DeletionTimestamp = &now
				return replace(o)
			},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid, fields: []string{"metadata.deletionTimestamp"},
		},
		{
			name: "creationTimestamp and missing uid are kept",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				o.UID = ""
				o.CreationTimestamp = metav1.NewTime(time.Unix(1, 0))
				o.Labels = map[string]string{"x": "y"}
				return replace(o)
			},
			check: func(t *testing.T, cur, got *corev1.ConfigMap) {
				if got.UID != cur.UID || !got.CreationTimestamp.Equal(&cur.CreationTimestamp) {
					t.Errorf("got uid %q created %v, want %q %v", got.UID, got.CreationTimestamp, cur.UID, cur.CreationTimestamp)
				}
			},
		},
		{
			name: "strategy validation",
			info: func(cur *corev1.ConfigMap) rest.UpdatedObjectInfo {
				o := cur.DeepCopy()
				o.Data = map[string]string{"bad key": "x"}
				return replace(o)
			},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid, fields: []string{"data[bad key]"},
		},
		{
			name: "missing object without create-on-update", key: "missing",
			info: func(*corev1.ConfigMap) rest.UpdatedObjectInfo { return replace(configMap("missing", nil)) },
			code: http.StatusNotFound, reason: metav1.StatusReasonNotFound, msg: `configmaps "missing" not found`,
		},
		{
			name: "create on update", key: "missing", strategy: configMapStrategy{createOnUpdate: true},
			info:    func(*corev1.ConfigMap) rest.UpdatedObjectInfo { return replace(configMap("missing", nil)) },
			created: true,
			check: func(t *testing.T, _, got *corev1.ConfigMap) {
				if got.UID == "" || got.Namespace != "ns" || got.ResourceVersion == "" {
					t.Errorf("got %+v, want a created object", got.ObjectMeta)
				}
			},
		},
		{
			name: "forced create on update", key: "missing", force: true,
			info:    func(*corev1.ConfigMap) rest.UpdatedObjectInfo { return replace(configMap("missing", nil)) },
			created: true,
		},
		{
			name: "create on update validates as create", key: "missing", force: true,
			info: func(*corev1.ConfigMap) rest.UpdatedObjectInfo {
				return replace(configMap("missing", map[string]string{"bad key": ""}))
			},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid, fields: []string{"data[bad key]"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.strategy
			s := newConfigMapStore(t, newBackend(t), func(s *Store) { s.CreateStrategy, s.UpdateStrategy = st, st })
			ctx := nsCtx("ns")
			cur := mustCreate(t, s, ctx, configMap("foo", map[string]string{"k": "v"}))
			key := tc.key
			if key == "" {
				key = "foo"
			}
			out, created, err := s.Update(ctx, key, tc.info(cur), nil, nil, tc.force, &metav1.UpdateOptions{})
			if tc.code != 0 {
				se := wantStatus(t, err, tc.code, tc.reason, tc.msg)
				if tc.fields != nil && !reflect.DeepEqual(causeFields(se), tc.fields) {
					t.Errorf("got cause fields %v, want %v", causeFields(se), tc.fields)
				}
				return
			}
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if created != tc.created {
				t.Errorf("got created %v, want %v", created, tc.created)
			}
			if tc.check != nil {
				tc.check(t, cur, out.(*corev1.ConfigMap))
			}
		})
	}
}

func TestUpdateNoOpKeepsResourceVersion(t *testing.T) {
	b := newBackend(t)
	s := newConfigMapStore(t, b)
	ctx := nsCtx("ns")
	cur := mustCreate(t, s, ctx, configMap("foo", map[string]string{"k": "v"}))
	rev := b.Revision()
	out, _, err := s.Update(ctx, "foo", replace(cur), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if got := out.(*corev1.ConfigMap).ResourceVersion; got != cur.ResourceVersion {
		t.Errorf("got resourceVersion %s, want %s (no-op)", got, cur.ResourceVersion)
	}
	if b.Revision() != rev {
		t.Errorf("got revision %d, want %d: a no-op update writes nothing", b.Revision(), rev)
	}
}

func TestUpdateDryRun(t *testing.T) {
	b := newBackend(t)
	s := newConfigMapStore(t, b)
	ctx := nsCtx("ns")
	cur := mustCreate(t, s, ctx, configMap("foo", map[string]string{"k": "v"}))
	rev := b.Revision()
	o := cur.DeepCopy()
	o.Data["k"] = "dry"
	out, _, err := s.Update(ctx, "foo", replace(o), nil, nil, false, &metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run update: %v", err)
	}
	if got := out.(*corev1.ConfigMap); got.Data["k"] != "dry" {
		t.Errorf("got data %v, want the updated object", got.Data)
	}
	stored, _ := s.Get(ctx, "foo", &metav1.GetOptions{})
	if got := stored.(*corev1.ConfigMap); got.Data["k"] != "v" || got.ResourceVersion != cur.ResourceVersion {
		t.Errorf("got stored data %v rv %s, want unchanged", got.Data, got.ResourceVersion)
	}
	// A dry-run conflict is reported as the real one.
	o.ResourceVersion = "999"
	_, _, err = s.Update(ctx, "foo", replace(o), nil, nil, false, &metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	wantStatus(t, err, http.StatusConflict, metav1.StatusReasonConflict, "")
	if b.Revision() != rev {
		t.Errorf("got revision %d, want %d after dry runs", b.Revision(), rev)
	}
}

func TestConcurrentUpdatesOneWins(t *testing.T) {
	s := newConfigMapStore(t, newBackend(t))
	ctx := nsCtx("ns")
	cur := mustCreate(t, s, ctx, configMap("foo", map[string]string{"k": "v"}))
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			o := cur.DeepCopy()
			o.Data["k"] = string(rune('a' + i))
			_, _, errs[i] = s.Update(ctx, "foo", replace(o), nil, nil, false, &metav1.UpdateOptions{})
		})
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case apierrors.IsConflict(err):
		default:
			t.Errorf("got %v, want success or Conflict", err)
		}
	}
	if wins != 1 {
		t.Errorf("got %d successful updates, want exactly 1", wins)
	}
}

func TestUpdateGeneration(t *testing.T) {
	s := newDeploymentStore(t, newBackend(t))
	ctx := nsCtx("ns")
	cur := mustCreate(t, s, ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1))}})
	steps := []struct {
		name    string
		change  func(d *appsv1.Deployment)
		wantGen int64
	}{
		{"labels do not bump", func(d *appsv1.Deployment) { d.Labels = map[string]string{"a": "b"} }, 1},
		{"status through the main resource is ignored", func(d *appsv1.Deployment) { d.Status.Replicas = 9 }, 1},
		{"client generation is ignored", func(d *appsv1.Deployment) { d.Generation = 42 }, 1},
		{"spec bumps", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr(int32(2)) }, 2},
		{"spec again", func(d *appsv1.Deployment) { d.Spec.Paused = true }, 3},
	}
	for _, st := range steps {
		out, _, err := s.Update(ctx, "d", modify(st.change), nil, nil, false, &metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got := out.(*appsv1.Deployment)
		if got.Generation != st.wantGen {
			t.Errorf("%s: got generation %d, want %d", st.name, got.Generation, st.wantGen)
		}
		if got.Status.Replicas != 0 {
			t.Errorf("%s: got status.replicas %d, want 0 (main resource ignores status)", st.name, got.Status.Replicas)
		}
		cur = got
	}
	_ = cur
}
