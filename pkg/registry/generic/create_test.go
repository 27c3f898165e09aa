package generic

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/storage"
)

func TestCreate(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name      string
		ns        string
		obj       *corev1.ConfigMap
		code      int32 // 0: success
		reason    metav1.StatusReason
		msg       string
		fields    []string
		check     func(t *testing.T, got *corev1.ConfigMap)
		wantWarns []string
	}{
		{
			name: "system fields and namespace from the request", ns: "ns",
			obj: configMap("a", map[string]string{"k": "v"}),
			check: func(t *testing.T, got *corev1.ConfigMap) {
				if got.UID == "" || got.CreationTimestamp.IsZero() || got.ResourceVersion == "" {
					t.Errorf("got uid %q creationTimestamp %v resourceVersion %q, want all set", got.UID, got.CreationTimestamp, got.ResourceVersion)
				}
				if got.Namespace != "ns" {
					t.Errorf("got namespace %q, want ns", got.Namespace)
				}
			},
		},
		{
			name: "client uid and timestamps are replaced, deletion cleared", ns: "ns",
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", UID: "mine",
				CreationTimestamp: metav1.NewTime(time.Unix(1000, 0)), DeletionTimestamp: &now, DeletionGracePeriodSeconds: ptr(int64(5))}},
			check: func(t *testing.T, got *corev1.ConfigMap) {
				if got.UID == "mine" || got.CreationTimestamp.Unix() == 1000 {
					t.Errorf("got uid %q creationTimestamp %v, want server's", got.UID, got.CreationTimestamp)
				}
				if got.DeletionTimestamp != nil || got.DeletionGracePeriodSeconds != nil {
					t.Errorf("got deletionTimestamp %v grace %v, want nil", got.DeletionTimestamp, got.DeletionGracePeriodSeconds)
				}
			},
		},
		{
			name: "warnings reach the context's recorder", ns: "ns",
			obj:       configMap("w", map[string]string{"deprecated": "x"}),
			wantWarns: []string{"data[deprecated]: do not use"},
		},
		{
			name: "namespace mismatch", ns: "ns",
			obj:  &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "other"}},
			code: http.StatusBadRequest, reason: metav1.StatusReasonBadRequest,
			msg: "the namespace of the provided object does not match the namespace sent on the request",
		},
		{
			name: "missing namespace", ns: "",
			obj:  configMap("d", nil),
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
			msg:    `ConfigMap "d" is invalid: metadata.namespace: Required value`,
			fields: []string{"metadata.namespace"},
		},
		{
			name: "no name", ns: "ns",
			obj:  configMap("", nil),
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
			msg:    `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`,
			fields: []string{"metadata.name"},
		},
		{
			name: "name not a DNS subdomain", ns: "ns",
			obj:  configMap("Bad_Name", nil),
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
			fields: []string{"metadata.name"},
		},
		{
			name: "invalid label and annotation", ns: "ns",
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "e",
				Labels: map[string]string{"a b": "c"}, Annotations: map[string]string{"-x": "y"}}},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
			fields: []string{"metadata.labels", "metadata.annotations"},
		},
		{
			name: "invalid owner reference and finalizer", ns: "ns",
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "f",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p"}},
				Finalizers:      []string{"a/b/c"}}},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
			fields: []string{"metadata.ownerReferences[0].uid", "metadata.finalizers"},
		},
		{
			name: "metadata errors first, then the strategy's", ns: "ns",
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "g", Labels: map[string]string{"a b": "c"}},
				Data: map[string]string{"bad key": "v"}},
			code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
			fields: []string{"metadata.labels", "data[bad key]"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newConfigMapStore(t, newBackend(t))
			var warns recordedWarnings
			ctx := warning.WithRecorder(nsCtx(tc.ns), &warns)
			out, err := s.Create(ctx, tc.obj, nil, &metav1.CreateOptions{})
			if tc.code != 0 {
				se := wantStatus(t, err, tc.code, tc.reason, tc.msg)
				if tc.fields != nil {
					if got := causeFields(se); !reflect.DeepEqual(got, tc.fields) {
						t.Errorf("got cause fields %v, want %v", got, tc.fields)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			got := out.(*corev1.ConfigMap)
			if tc.check != nil {
				tc.check(t, got)
			}
			if !reflect.DeepEqual([]string(warns), tc.wantWarns) {
				t.Errorf("got warnings %q, want %q", warns, tc.wantWarns)
			}
			stored, err := s.Get(nsCtx(got.Namespace), got.Name, &metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if sc := stored.(*corev1.ConfigMap); sc.UID != got.UID || sc.ResourceVersion != got.ResourceVersion {
				t.Errorf("got stored uid %q rv %q, want %q %q", sc.UID, sc.ResourceVersion, got.UID, got.ResourceVersion)
			}
		})
	}
}

func TestCreateAlreadyExists(t *testing.T) {
	s := newConfigMapStore(t, newBackend(t))
	ctx := nsCtx("ns")
	mustCreate(t, s, ctx, configMap("foo", nil))
	_, err := s.Create(ctx, configMap("foo", nil), nil, &metav1.CreateOptions{})
	wantStatus(t, err, http.StatusConflict, metav1.StatusReasonAlreadyExists, `configmaps "foo" already exists`)

	// An object being deleted says so.
	withFinalizer := configMap("held", nil)
	withFinalizer.Finalizers = []string{"example.com/hold"}
	mustCreate(t, s, ctx, withFinalizer)
	if _, _, err := s.Delete(ctx, "held", nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = s.Create(ctx, configMap("held", nil), nil, &metav1.CreateOptions{})
	wantStatus(t, err, http.StatusConflict, metav1.StatusReasonAlreadyExists, `object is being deleted: configmaps "held" already exists`)
}

func TestCreateKindsAndKeys(t *testing.T) {
	b := newBackend(t)
	ctx := nsCtx("ns")

	deployments := newDeploymentStore(t, b)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Generation: 7},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr(int32(1))},
		Status: appsv1.DeploymentStatus{Replicas: 5}}
	got := mustCreate(t, deployments, ctx, d)
	if got.Generation != 1 {
		t.Errorf("got generation %d, want 1", got.Generation)
	}
	if got.Status.Replicas != 0 {
		t.Errorf("got status.replicas %d, want the status cleared", got.Status.Replicas)
	}
	bad := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(-1))}}
	_, err := deployments.Create(ctx, bad, nil, &metav1.CreateOptions{})
	wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`Deployment.apps "bad" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`)

	namespaces := newNamespaceStore(t, b)
	ns := mustCreate(t, namespaces, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "ns"}})
	if ns.Namespace != "" {
		t.Errorf("got namespace %q on a cluster-scoped object, want none", ns.Namespace)
	}

	configmaps := newConfigMapStore(t, b)
	mustCreate(t, configmaps, ctx, configMap("c", nil))

	// The keys are kube's.
	for _, k := range []struct {
		key string
		obj runtime.Object
	}{
		{"/apps/deployments/ns/d", &appsv1.Deployment{}},
		{"/namespaces/n1", &corev1.Namespace{}},
		{"/configmaps/ns/c", &corev1.ConfigMap{}},
	} {
		var st storage.Interface
		switch k.obj.(type) {
		case *appsv1.Deployment:
			st = deployments.Storage
		case *corev1.Namespace:
			st = namespaces.Storage
		default:
			st = configmaps.Storage
		}
		if err := st.Get(context.Background(), k.key, storage.GetOptions{}, k.obj); err != nil {
			t.Errorf("get %s: %v", k.key, err)
		}
	}
}

func TestCreateValidationFunc(t *testing.T) {
	s := newConfigMapStore(t, newBackend(t))
	ctx := nsCtx("ns")
	denied := apierrors.NewForbidden(s.DefaultQualifiedResource, "a", errors.New("admission says no"))
	var seen *corev1.ConfigMap
	_, err := s.Create(ctx, configMap("a", nil), func(_ context.Context, obj runtime.Object) error {
		seen = obj.(*corev1.ConfigMap)
		return denied
	}, &metav1.CreateOptions{})
	if !errors.Is(err, denied) {
		t.Fatalf("got %v, want the validation error", err)
	}
	if seen == nil || seen.UID == "" || seen.Namespace != "ns" {
		t.Errorf("got validated object %+v, want the prepared object", seen)
	}
	if _, err := s.Get(ctx, "a", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("got %v, want NotFound: nothing stored", err)
	}
}

func TestCreateGenerateName(t *testing.T) {
	t.Run("random suffix", func(t *testing.T) {
		s := newConfigMapStore(t, newBackend(t))
		obj := configMap("", nil)
		obj.GenerateName = "foo-"
		got := mustCreate(t, s, nsCtx("ns"), obj)
		suffix, ok := strings.CutPrefix(got.Name, "foo-")
		if !ok || len(suffix) != 5 || strings.Trim(suffix, "bcdfghjklmnpqrstvwxz2456789") != "" {
			t.Errorf("got name %q, want foo- and 5 characters of kube's alphabet", got.Name)
		}
	})
	t.Run("long base is cut", func(t *testing.T) {
		got := SimpleNameGenerator(strings.Repeat("a", 70))
		if len(got) != 63 || !strings.HasPrefix(got, strings.Repeat("a", 58)) {
			t.Errorf("got %q (%d), want 58 a's and 5 random characters", got, len(got))
		}
	})
	t.Run("taken name is retried", func(t *testing.T) {
		names := []string{"foo-taken", "foo-taken", "foo-free1"}
		calls := 0
		s := newConfigMapStore(t, newBackend(t), func(s *Store) {
			s.GenerateNameFunc = func(string) string { calls++; return names[min(calls, len(names))-1] }
		})
		ctx := nsCtx("ns")
		mustCreate(t, s, ctx, configMap("foo-taken", nil))
		obj := configMap("", nil)
		obj.GenerateName = "foo-"
		got := mustCreate(t, s, ctx, obj)
		if got.Name != "foo-free1" || calls != 3 {
			t.Errorf("got name %q after %d attempts, want foo-free1 after 3", got.Name, calls)
		}
		if obj.Name != "" {
			t.Errorf("got the caller's object renamed to %q, want it untouched", obj.Name)
		}
	})
	t.Run("gives up after 8 attempts", func(t *testing.T) {
		calls := 0
		s := newConfigMapStore(t, newBackend(t), func(s *Store) {
			s.GenerateNameFunc = func(string) string { calls++; return "foo-taken" }
		})
		ctx := nsCtx("ns")
		mustCreate(t, s, ctx, configMap("foo-taken", nil))
		obj := configMap("", nil)
		obj.GenerateName = "foo-"
		_, err := s.Create(ctx, obj, nil, &metav1.CreateOptions{})
		se := wantStatus(t, err, http.StatusConflict, metav1.StatusReasonAlreadyExists,
			`configmaps "foo-taken" already exists, the server was not able to generate a unique name for the object`)
		if se.ErrStatus.Details.RetryAfterSeconds != 1 {
			t.Errorf("got retryAfterSeconds %d, want 1", se.ErrStatus.Details.RetryAfterSeconds)
		}
		if calls != maxNameGenerationCreateAttempts {
			t.Errorf("got %d attempts, want %d", calls, maxNameGenerationCreateAttempts)
		}
	})
}

func TestCreateDryRun(t *testing.T) {
	b := newBackend(t)
	s := newConfigMapStore(t, b)
	ctx := nsCtx("ns")
	mustCreate(t, s, ctx, configMap("exists", nil))
	rev := b.Revision()

	out, err := s.Create(ctx, configMap("new", map[string]string{"k": "v"}), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	got := out.(*corev1.ConfigMap)
	if got.UID == "" || got.CreationTimestamp.IsZero() || got.Namespace != "ns" || got.ResourceVersion != "" {
		t.Errorf("got uid %q created %v ns %q rv %q, want a prepared object without resourceVersion",
			got.UID, got.CreationTimestamp, got.Namespace, got.ResourceVersion)
	}
	if _, err := s.Get(ctx, "new", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("got %v, want NotFound after a dry run", err)
	}
	_, err = s.Create(ctx, configMap("exists", nil), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	wantStatus(t, err, http.StatusConflict, metav1.StatusReasonAlreadyExists, `configmaps "exists" already exists`)
	_, err = s.Create(ctx, configMap("Invalid_", nil), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if got := b.Revision(); got != rev {
		t.Errorf("got revision %d after dry runs, want %d", got, rev)
	}
}
