package customresource

import (
	"context"
	"fmt"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// ScaleREST serves the scale subresource of a version of a CRD with
// spec.subresources.scale, as upstream: autoscaling/v1 Scale read from and
// written to the CRD's replica paths (integers; a missing status replicas
// or selector reads as zero / empty). A missing spec replicas field is a
// 500 on get and a 400 on an update that does not set it; managed fields
// of spec replicas are shown on the Scale as spec.replicas and mapped back.
type ScaleREST struct {
	store                         *generic.Store
	specPath, statusPath, selPath string
	parentGV                      schema.GroupVersion
	mappings                      managedfields.ResourcePathMappings
	// TableConvertor writes a Scale as a Table: Name, Desired and
	// Available (for the replica paths the version declares) and Age, as
	// upstream's getScaleColumnsForVersion (apiextensions-apiserver
	// v0.37.2 pkg/apiserver/helpers.go).
	rest.TableConvertor
}

var (
	_ rest.Getter                   = (*ScaleREST)(nil)
	_ rest.Updater                  = (*ScaleREST)(nil)
	_ rest.Patcher                  = (*ScaleREST)(nil)
	_ rest.GroupVersionKindProvider = (*ScaleREST)(nil)
	_ rest.TableConvertor           = (*ScaleREST)(nil)
)

// scaleColumns are the Table columns of a Scale for the scale settings s
// (Name comes first, from the convertor).
func scaleColumns(s *apiextensionsv1.CustomResourceSubresourceScale) []apiextensionsv1.CustomResourceColumnDefinition {
	var cols []apiextensionsv1.CustomResourceColumnDefinition
	if s.SpecReplicasPath != "" {
		cols = append(cols, apiextensionsv1.CustomResourceColumnDefinition{
			Name: "Desired", Type: "integer", Description: "Number of desired replicas", JSONPath: ".spec.replicas",
		})
	}
	if s.StatusReplicasPath != "" {
		cols = append(cols, apiextensionsv1.CustomResourceColumnDefinition{
			Name: "Available", Type: "integer", Description: "Number of actual replicas", JSONPath: ".status.replicas",
		})
	}
	return append(cols, apiextensionsv1.CustomResourceColumnDefinition{
		Name: "Age", Type: "date", Description: metadataDescriptions["creationTimestamp"], JSONPath: ".metadata.creationTimestamp",
	})
}

// NewScaleREST returns the scale subresource of store (served version gv)
// for crd's scale settings s.
func NewScaleREST(store *generic.Store, gv schema.GroupVersion, crd *apiextensionsv1.CustomResourceDefinition, s *apiextensionsv1.CustomResourceSubresourceScale) *ScaleREST {
	r := &ScaleREST{store: store, specPath: s.SpecReplicasPath, statusPath: s.StatusReplicasPath, parentGV: gv, mappings: managedfields.ResourcePathMappings{},
		TableConvertor: NewTableConvertor(schema.GroupResource{}, scaleColumns(s))}
	if s.LabelSelectorPath != nil {
		r.selPath = *s.LabelSelectorPath
	}
	for _, v := range crd.Spec.Versions {
		if v.Subresources == nil || v.Subresources.Scale == nil {
			continue
		}
		parts := splitReplicasPath(v.Subresources.Scale.SpecReplicasPath)
		elems := make([]any, len(parts))
		for i, p := range parts {
			elems[i] = p
		}
		if p, err := fieldpath.MakePath(elems...); err == nil {
			r.mappings[schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}.String()] = p
		}
	}
	return r
}

func (r *ScaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

// NamespaceScoped implements rest.Scoper: the custom resource's scope
// (the scale handler serves the subresource without its resource).
func (r *ScaleREST) NamespaceScoped() bool { return r.store.NamespaceScoped() }

// Destroy does nothing: the main resource's storage is the serving's.
func (r *ScaleREST) Destroy() {}

func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	scale, found, err := r.scaleOf(obj.(*unstructured.Unstructured))
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !found {
		return nil, apierrors.NewInternalError(fmt.Errorf("the spec replicas field %q does not exist", r.specPath))
	}
	return scale, nil
}

func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	info := &scaleUpdatedObject{rest: r, inner: objInfo}
	var validate rest.ValidateObjectUpdateFunc
	if updateValidation != nil {
		validate = func(ctx context.Context, obj, old runtime.Object) error {
			n, _, err := r.scaleOf(obj.(*unstructured.Unstructured))
			if err != nil {
				return err
			}
			o, _, err := r.scaleOf(old.(*unstructured.Unstructured))
			if err != nil {
				return err
			}
			return updateValidation(ctx, n, o)
		}
	}
	obj, _, err := r.store.Update(ctx, name, info, nil, validate, false, options)
	if err != nil {
		return nil, false, err
	}
	scale, _, err := r.scaleOf(obj.(*unstructured.Unstructured))
	if err != nil {
		return nil, false, apierrors.NewBadRequest(err.Error())
	}
	return scale, false, nil
}

func splitReplicasPath(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }

// scaleOf reads cr's Scale; found tells whether spec replicas is set.
func (r *ScaleREST) scaleOf(cr *unstructured.Unstructured) (*autoscalingv1.Scale, bool, error) {
	spec, found, err := unstructured.NestedInt64(cr.Object, splitReplicasPath(r.specPath)...)
	if err != nil {
		return nil, false, err
	}
	status, _, err := unstructured.NestedInt64(cr.Object, splitReplicasPath(r.statusPath)...)
	if err != nil {
		return nil, false, err
	}
	var selector string
	if r.selPath != "" {
		if selector, _, err = unstructured.NestedString(cr.Object, splitReplicasPath(r.selPath)...); err != nil {
			return nil, false, err
		}
	}
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              cr.GetName(),
			Namespace:         cr.GetNamespace(),
			UID:               cr.GetUID(),
			ResourceVersion:   cr.GetResourceVersion(),
			CreationTimestamp: cr.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(spec)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(status), Selector: selector},
	}, found, nil
}

// scaleUpdatedObject turns an update of a Scale into one of the custom
// resource it scales.
type scaleUpdatedObject struct {
	rest  *ScaleREST
	inner rest.UpdatedObjectInfo
}

func (s *scaleUpdatedObject) Preconditions() *metav1.Preconditions { return s.inner.Preconditions() }

// unsetReplicas marks a Scale read from an object without spec replicas.
const unsetReplicas = -2147483648

func (s *scaleUpdatedObject) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	if old == nil {
		return nil, apierrors.NewNotFound(s.rest.store.DefaultQualifiedResource, "")
	}
	cr := old.DeepCopyObject().(*unstructured.Unstructured)
	if cr.GetUID() == "" {
		// Nothing stored: a scale never creates.
		return nil, apierrors.NewNotFound(s.rest.store.DefaultQualifiedResource, "")
	}
	managed := managedfields.NewScaleHandler(cr.GetManagedFields(), s.rest.parentGV, s.rest.mappings)
	oldScale, found, err := s.rest.scaleOf(cr)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !found {
		oldScale.Spec.Replicas = unsetReplicas
	}
	if oldScale.ManagedFields, err = managed.ToSubresource(); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("managed fields of the scale: %w", err))
	}
	obj, err := s.inner.UpdatedObject(ctx, oldScale)
	if err != nil {
		return nil, err
	}
	scale, ok := obj.(*autoscalingv1.Scale)
	if !ok || scale == nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("wrong object passed to Scale update: %v", obj))
	}
	if scale.Spec.Replicas == unsetReplicas {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the spec replicas field %q cannot be empty", s.rest.specPath))
	}
	// Negative replicas are not refused here: as upstream, they are set
	// on the custom resource, whose validation (its schema, then the scale
	// subresource's replicas paths) refuses them in the resource's terms.
	if err := unstructured.SetNestedField(cr.Object, int64(scale.Spec.Replicas), splitReplicasPath(s.rest.specPath)...); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if scale.ResourceVersion != "" {
		// The client's precondition.
		cr.SetResourceVersion(scale.ResourceVersion)
	}
	entries, err := managed.ToParent(scale.ManagedFields)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("managed fields of the scale: %w", err))
	}
	cr.SetManagedFields(entries)
	return cr, nil
}
