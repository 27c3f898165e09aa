package generic

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// ScaleAccessor reads and writes the replica fields of a scalable object:
// the hook a resource with a scale subresource provides (deployments,
// statefulsets, custom resources with spec.subresources.scale).
type ScaleAccessor interface {
	// Replicas returns the desired and observed replicas and the label
	// selector (serialized, as in Scale.status.selector; "" if none).
	Replicas(obj runtime.Object) (spec, status int32, selector string, err error)
	// SetReplicas sets the desired replicas of obj in place.
	SetReplicas(obj runtime.Object, replicas int32) error
}

// ScaleREST serves the scale subresource of the objects in a store as
// autoscaling/v1 Scale, as kube-apiserver does: GET reads the replica
// fields, PUT and PATCH change spec.replicas of the object (with the
// Scale's resourceVersion as a precondition on the object).
type ScaleREST struct {
	store    *Store
	accessor ScaleAccessor
}

var (
	_ rest.Storage                  = (*ScaleREST)(nil)
	_ rest.Getter                   = (*ScaleREST)(nil)
	_ rest.Updater                  = (*ScaleREST)(nil)
	_ rest.GroupVersionKindProvider = (*ScaleREST)(nil)
)

// NewScaleREST returns the scale subresource of store.
func NewScaleREST(store *Store, accessor ScaleAccessor) *ScaleREST {
	return &ScaleREST{store: store, accessor: accessor}
}

// New returns an empty Scale.
func (r *ScaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

// Destroy does nothing: the main resource owns the storage.
func (r *ScaleREST) Destroy() {}

// GroupVersionKind is autoscaling/v1 Scale in every group.
func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

// Get returns the Scale of the named object.
func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return r.scaleOf(obj)
}

func (r *ScaleREST) scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	spec, status, selector, err := r.accessor.Replicas(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("read replicas of %s %q: %w", r.store.DefaultQualifiedResource, m.GetName(), err))
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name:              m.GetName(),
			Namespace:         m.GetNamespace(),
			UID:               m.GetUID(),
			ResourceVersion:   m.GetResourceVersion(),
			CreationTimestamp: m.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: spec},
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: selector},
	}, nil
}

// Update changes the desired replicas of the named object to those of the
// Scale objInfo computes from the current one. A scale never creates.
func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if updateValidation == nil {
		updateValidation = rest.ValidateAllObjectUpdateFunc
	}
	info := &scaleUpdatedObject{rest: r, inner: objInfo, validate: updateValidation}
	obj, _, err := r.store.Update(ctx, name, info, nil, rest.ValidateAllObjectUpdateFunc, false, options)
	if err != nil {
		return nil, false, err
	}
	scale, err := r.scaleOf(obj)
	return scale, false, err
}

// scaleUpdatedObject turns an update of a Scale into an update of the
// object it scales.
type scaleUpdatedObject struct {
	rest     *ScaleREST
	inner    rest.UpdatedObjectInfo
	validate rest.ValidateObjectUpdateFunc
}

func (s *scaleUpdatedObject) Preconditions() *metav1.Preconditions { return s.inner.Preconditions() }

func (s *scaleUpdatedObject) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	if old == nil {
		return nil, apierrors.NewNotFound(s.rest.store.DefaultQualifiedResource, "")
	}
	oldScale, err := s.rest.scaleOf(old)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(old)
	if err != nil {
		return nil, err
	}
	// The Scale carries the parent's managers of spec.replicas as its own
	// (spec.replicas of autoscaling/v1), so that the request's field
	// manager records its change there, and the result goes back to the
	// parent: `kubectl scale` takes spec.replicas over, as upstream's
	// scale subresources do (managedfields.ScaleHandler).
	managed := managedfields.NewScaleHandler(m.GetManagedFields(), requestGroupVersion(ctx), replicasPaths)
	if oldScale.ManagedFields, err = managed.ToSubresource(); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("managed fields of the scale: %w", err))
	}
	newObj, err := s.inner.UpdatedObject(ctx, oldScale.DeepCopy())
	if err != nil {
		return nil, err
	}
	scale, ok := newObj.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected input object type to be Scale, but %T", newObj))
	}
	if errs := validateScale(scale); len(errs) > 0 {
		return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), scale.Name, errs)
	}
	// The Scale's resourceVersion, when set, must be the object's.
	if scale.ResourceVersion != "" && scale.ResourceVersion != m.GetResourceVersion() {
		return nil, apierrors.NewConflict(s.rest.store.DefaultQualifiedResource, m.GetName(), fmt.Errorf(OptimisticLockErrorMsg))
	}
	out := old.DeepCopyObject()
	if err := s.rest.accessor.SetReplicas(out, scale.Spec.Replicas); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	entries, err := managed.ToParent(scale.ManagedFields)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("managed fields of the scale: %w", err))
	}
	outMeta, err := meta.Accessor(out)
	if err != nil {
		return nil, err
	}
	outMeta.SetManagedFields(entries)
	// Validating admission sees Scales made from the objects, without
	// managed fields, as upstream's toScaleUpdateValidation.
	newScale, err := s.rest.scaleOf(out)
	if err != nil {
		return nil, err
	}
	if oldScale, err = s.rest.scaleOf(old); err != nil {
		return nil, err
	}
	if err := s.validate(ctx, newScale, oldScale); err != nil {
		return nil, err
	}
	return out, nil
}

// replicasPaths is where the built-in scalable kinds keep their desired
// replicas, per API version their managed fields may name (upstream's
// ReplicasPathMappings of deployments, replica sets, stateful sets and
// replication controllers, v1.37.2).
var replicasPaths = managedfields.ResourcePathMappings{
	"apps/v1beta1":       fieldpath.MakePathOrDie("spec", "replicas"),
	"apps/v1beta2":       fieldpath.MakePathOrDie("spec", "replicas"),
	"apps/v1":            fieldpath.MakePathOrDie("spec", "replicas"),
	"extensions/v1beta1": fieldpath.MakePathOrDie("spec", "replicas"),
	"v1":                 fieldpath.MakePathOrDie("spec", "replicas"),
}

// requestGroupVersion is the group-version the scale is served in (the
// parent's), as upstream takes it from the request info.
func requestGroupVersion(ctx context.Context) schema.GroupVersion {
	if info, ok := request.RequestInfoFrom(ctx); ok {
		return schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	}
	return schema.GroupVersion{Group: "apps", Version: "v1"}
}

func validateScale(s *autoscalingv1.Scale) field.ErrorList {
	if s.Spec.Replicas < 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), s.Spec.Replicas, "must be greater than or equal to 0")}
	}
	return nil
}

// PathScaleAccessor reads and writes replica fields of unstructured objects
// at the JSON paths of a CustomResourceDefinition's scale subresource
// (".spec.replicas", ".status.replicas", ".status.labelSelector").
type PathScaleAccessor struct {
	SpecReplicasPath   string
	StatusReplicasPath string
	LabelSelectorPath  string // optional
}

func splitPath(p string) ([]string, error) {
	if !strings.HasPrefix(p, ".") || len(p) < 2 {
		return nil, fmt.Errorf("invalid path %q: must start with a dot", p)
	}
	return strings.Split(p[1:], "."), nil
}

// Replicas implements ScaleAccessor. A missing status or selector reads as
// zero / empty, as upstream.
func (a PathScaleAccessor) Replicas(obj runtime.Object) (int32, int32, string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return 0, 0, "", fmt.Errorf("not unstructured: %T", obj)
	}
	spec, err := a.int32At(u, a.SpecReplicasPath)
	if err != nil {
		return 0, 0, "", err
	}
	status := int32(0)
	if a.StatusReplicasPath != "" {
		if status, err = a.int32At(u, a.StatusReplicasPath); err != nil {
			return 0, 0, "", err
		}
	}
	selector := ""
	if a.LabelSelectorPath != "" {
		fields, err := splitPath(a.LabelSelectorPath)
		if err != nil {
			return 0, 0, "", err
		}
		if s, found, err := unstructured.NestedString(u.Object, fields...); err == nil && found {
			selector = s
		}
	}
	return spec, status, selector, nil
}

func (a PathScaleAccessor) int32At(u *unstructured.Unstructured, p string) (int32, error) {
	fields, err := splitPath(p)
	if err != nil {
		return 0, err
	}
	v, found, err := unstructured.NestedFieldNoCopy(u.Object, fields...)
	if err != nil || !found || v == nil {
		return 0, err
	}
	switch n := v.(type) {
	case int64:
		return int32(n), nil
	case float64:
		return int32(n), nil
	case string:
		i, err := strconv.ParseInt(n, 10, 32)
		return int32(i), err
	default:
		return 0, fmt.Errorf("%s is %T, not a number", p, v)
	}
}

// SetReplicas implements ScaleAccessor.
func (a PathScaleAccessor) SetReplicas(obj runtime.Object, replicas int32) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("not unstructured: %T", obj)
	}
	fields, err := splitPath(a.SpecReplicasPath)
	if err != nil {
		return err
	}
	return unstructured.SetNestedField(u.Object, int64(replicas), fields...)
}
