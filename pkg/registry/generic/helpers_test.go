package generic

import (
	"context"
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// configMapStrategy is a test strategy for core/v1 ConfigMap: namespaced,
// no generation, no graceful deletion, keys validated.
type configMapStrategy struct {
	createOnUpdate bool
	unconditional  bool
}

func (configMapStrategy) NamespaceScoped() bool                            { return true }
func (configMapStrategy) PrepareForCreate(context.Context, runtime.Object) {}
func (configMapStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateConfigMapData(obj.(*corev1.ConfigMap))
}
func (configMapStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	if obj.(*corev1.ConfigMap).Data["deprecated"] != "" {
		return []string{"data[deprecated]: do not use"}
	}
	return nil
}
func (configMapStrategy) Canonicalize(runtime.Object)                                      {}
func (s configMapStrategy) AllowCreateOnUpdate() bool                                      { return s.createOnUpdate }
func (configMapStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (configMapStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validateConfigMapData(obj.(*corev1.ConfigMap))
}
func (configMapStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (s configMapStrategy) AllowUnconditionalUpdate() bool { return s.unconditional }

func validateConfigMapData(cm *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	for k := range cm.Data {
		for _, msg := range utilvalidation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, msg))
		}
	}
	return errs
}

// deploymentStrategy is a test strategy for apps/v1 Deployment: spec and
// status, generation from the spec, status ignored by the main resource.
type deploymentStrategy struct {
	SpecGeneration
}

func (deploymentStrategy) NamespaceScoped() bool { return true }
func (deploymentStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	must(ClearStatus(obj))
}
func (deploymentStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	d := obj.(*appsv1.Deployment)
	if d.Spec.Replicas != nil && *d.Spec.Replicas < 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), *d.Spec.Replicas, "must be greater than or equal to 0")}
	}
	return nil
}
func (deploymentStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (deploymentStrategy) Canonicalize(runtime.Object)                               {}
func (deploymentStrategy) AllowCreateOnUpdate() bool                                 { return false }
func (deploymentStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	must(CopyStatus(obj, old))
}
func (s deploymentStrategy) ValidateUpdate(ctx context.Context, obj, _ runtime.Object) field.ErrorList {
	return s.Validate(ctx, obj)
}
func (deploymentStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (deploymentStrategy) AllowUnconditionalUpdate() bool { return true }
func (deploymentStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return ResetFields([]schema.GroupVersion{appsv1.SchemeGroupVersion}, []string{"status"})
}

// podStrategy is a test strategy for core/v1 Pod with graceful deletion
// (default grace period 30s).
type podStrategy struct{}

func (podStrategy) NamespaceScoped() bool                                            { return true }
func (podStrategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (podStrategy) Validate(context.Context, runtime.Object) field.ErrorList         { return nil }
func (podStrategy) WarningsOnCreate(context.Context, runtime.Object) []string        { return nil }
func (podStrategy) Canonicalize(runtime.Object)                                      {}
func (podStrategy) AllowCreateOnUpdate() bool                                        { return false }
func (podStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (podStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}
func (podStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (podStrategy) AllowUnconditionalUpdate() bool { return true }
func (podStrategy) CheckGracefulDelete(_ context.Context, _ runtime.Object, options *metav1.DeleteOptions) bool {
	if options.GracePeriodSeconds == nil {
		options.GracePeriodSeconds = ptr(int64(30))
	}
	return true
}

// namespaceStrategy is a cluster-scoped test strategy (core/v1 Namespace).
type namespaceStrategy struct{ configMapLike }

type configMapLike struct{}

func (namespaceStrategy) NamespaceScoped() bool                                        { return false }
func (configMapLike) PrepareForCreate(context.Context, runtime.Object)                 {}
func (configMapLike) Validate(context.Context, runtime.Object) field.ErrorList         { return nil }
func (configMapLike) WarningsOnCreate(context.Context, runtime.Object) []string        { return nil }
func (configMapLike) Canonicalize(runtime.Object)                                      {}
func (configMapLike) AllowCreateOnUpdate() bool                                        { return false }
func (configMapLike) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (configMapLike) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}
func (configMapLike) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (configMapLike) AllowUnconditionalUpdate() bool { return false }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

var testCodec = scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion)

func newBackend(t *testing.T) *memory.Backend {
	t.Helper()
	b := memory.NewBackend(memory.BackendConfig{CompactionInterval: -1, FreshWait: 50 * time.Millisecond})
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func completeStore(t *testing.T, s *Store) *Store {
	t.Helper()
	if err := s.Complete(); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	t.Cleanup(s.Destroy)
	return s
}

func newConfigMapStore(t *testing.T, b *memory.Backend, mods ...func(*Store)) *Store {
	t.Helper()
	newFunc := func() runtime.Object { return &corev1.ConfigMap{} }
	newList := func() runtime.Object { return &corev1.ConfigMapList{} }
	s := &Store{
		NewFunc:                   newFunc,
		NewListFunc:               newList,
		DefaultQualifiedResource:  schema.GroupResource{Resource: "configmaps"},
		SingularQualifiedResource: schema.GroupResource{Resource: "configmap"},
		ResourceShortNames:        []string{"cm"},
		CreateStrategy:            configMapStrategy{},
		UpdateStrategy:            configMapStrategy{},
		Storage:                   b.Store(memory.Config{Codec: testCodec, NewFunc: newFunc, NewListFunc: newList}),
	}
	for _, m := range mods {
		m(s)
	}
	return completeStore(t, s)
}

func newDeploymentStore(t *testing.T, b *memory.Backend) *Store {
	t.Helper()
	newFunc := func() runtime.Object { return &appsv1.Deployment{} }
	newList := func() runtime.Object { return &appsv1.DeploymentList{} }
	return completeStore(t, &Store{
		NewFunc:                  newFunc,
		NewListFunc:              newList,
		DefaultQualifiedResource: schema.GroupResource{Group: "apps", Resource: "deployments"},
		CreateStrategy:           deploymentStrategy{},
		UpdateStrategy:           deploymentStrategy{},
		ReturnDeletedObject:      true,
		Storage:                  b.Store(memory.Config{Codec: testCodec, NewFunc: newFunc, NewListFunc: newList}),
	})
}

func newPodStore(t *testing.T, b *memory.Backend) *Store {
	t.Helper()
	newFunc := func() runtime.Object { return &corev1.Pod{} }
	newList := func() runtime.Object { return &corev1.PodList{} }
	return completeStore(t, &Store{
		NewFunc:                  newFunc,
		NewListFunc:              newList,
		DefaultQualifiedResource: schema.GroupResource{Resource: "pods"},
		CreateStrategy:           podStrategy{},
		UpdateStrategy:           podStrategy{},
		DeleteStrategy:           podStrategy{},
		ReturnDeletedObject:      true,
		Storage:                  b.Store(memory.Config{Codec: testCodec, NewFunc: newFunc, NewListFunc: newList}),
	})
}

func newNamespaceStore(t *testing.T, b *memory.Backend) *Store {
	t.Helper()
	newFunc := func() runtime.Object { return &corev1.Namespace{} }
	newList := func() runtime.Object { return &corev1.NamespaceList{} }
	return completeStore(t, &Store{
		NewFunc:                  newFunc,
		NewListFunc:              newList,
		DefaultQualifiedResource: schema.GroupResource{Resource: "namespaces"},
		CreateStrategy:           namespaceStrategy{},
		UpdateStrategy:           namespaceStrategy{},
		Storage:                  b.Store(memory.Config{Codec: testCodec, NewFunc: newFunc, NewListFunc: newList}),
	})
}

func nsCtx(ns string) context.Context {
	return request.WithNamespace(context.Background(), ns)
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

// objInfo is a rest.UpdatedObjectInfo from a function of the old object.
type objInfo struct {
	pre *metav1.Preconditions
	fn  func(old runtime.Object) (runtime.Object, error)
}

func (i objInfo) Preconditions() *metav1.Preconditions { return i.pre }
func (i objInfo) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	return i.fn(old)
}

var _ rest.UpdatedObjectInfo = objInfo{}

// replace is a PUT of obj.
func replace(obj runtime.Object) objInfo {
	return objInfo{fn: func(runtime.Object) (runtime.Object, error) { return obj.DeepCopyObject(), nil }}
}

// modify is a read-modify-write of the current object.
func modify[T runtime.Object](fn func(T)) objInfo {
	return objInfo{fn: func(old runtime.Object) (runtime.Object, error) {
		o := old.DeepCopyObject().(T)
		fn(o)
		return o, nil
	}}
}

func mustCreate[T runtime.Object](t *testing.T, s *Store, ctx context.Context, obj T) T {
	t.Helper()
	out, err := s.Create(ctx, obj, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return out.(T)
}

// wantStatus checks err is an API error with code and reason (and message,
// if not empty).
func wantStatus(t *testing.T, err error, code int32, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("got error %v (%T), want a StatusError %d %s", err, err, code, reason)
	}
	if se.ErrStatus.Code != code || se.ErrStatus.Reason != reason {
		t.Fatalf("got %d %s (%q), want %d %s", se.ErrStatus.Code, se.ErrStatus.Reason, se.ErrStatus.Message, code, reason)
	}
	if msg != "" && se.ErrStatus.Message != msg {
		t.Fatalf("got message %q, want %q", se.ErrStatus.Message, msg)
	}
	return se
}

func causeFields(se *apierrors.StatusError) []string {
	var out []string
	if se.ErrStatus.Details != nil {
		for _, c := range se.ErrStatus.Details.Causes {
			out = append(out, c.Field)
		}
	}
	return out
}

type recordedWarnings []string

func (w *recordedWarnings) AddWarning(_, text string) { *w = append(*w, text) }
