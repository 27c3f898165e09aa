package apiextensions

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/apiextensions/cel"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// crdResource is customresourcedefinitions.apiextensions.k8s.io.
var crdResource = apiextensionsv1.Resource("customresourcedefinitions")

// CRDREST is the customresourcedefinitions resource: a generic store whose
// first delete only marks the CRD (deletionTimestamp, the cleanup
// finalizer, Terminating=True InstanceDeletionPending), as upstream.
type CRDREST struct {
	*generic.Store
}

var (
	_ rest.GracefulDeleter   = (*CRDREST)(nil)
	_ rest.CollectionDeleter = (*CRDREST)(nil)
)

// newCRDREST builds the resource and its status subresource.
func newCRDREST(opts generic.RESTOptions, celMetrics *cel.Metrics) (*CRDREST, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, apiextensionsv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &apiextensionsv1.CustomResourceDefinition{} },
		NewListFunc:               func() runtime.Object { return &apiextensionsv1.CustomResourceDefinitionList{} },
		DefaultQualifiedResource:  crdResource,
		SingularQualifiedResource: apiextensionsv1.Resource("customresourcedefinition"),
		ResourceShortNames:        []string{"crd", "crds"},
		ResourceCategories:        []string{"api-extensions"},
		CreateStrategy:            crdStrategy{celMetrics: celMetrics},
		UpdateStrategy:            crdStrategy{celMetrics: celMetrics},
		TableConvertor:            crdTable,
	})
	if err != nil {
		return nil, nil, err
	}
	return &CRDREST{Store: store}, generic.NewStatusREST(store, crdStatusStrategy), nil
}

// Delete implements rest.GracefulDeleter. The first delete marks the CRD
// for deletion and returns it (the finalizer controller deletes its custom
// resources, then removes the finalizer, which deletes the CRD); later
// deletes go to the generic store.
func (r *CRDREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	obj, err := r.Store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	if deleteValidation == nil {
		deleteValidation = rest.ValidateAllObjectFunc
	}
	options = options.DeepCopy()
	if options.Preconditions == nil {
		options.Preconditions = &metav1.Preconditions{}
	}
	p := options.Preconditions
	if p.UID == nil {
		p.UID = &crd.UID
	} else if *p.UID != crd.UID {
		return nil, false, apierrors.NewConflict(crdResource, name,
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, crd.UID))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != crd.ResourceVersion {
		return nil, false, apierrors.NewConflict(crdResource, name,
			fmt.Errorf("precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, crd.ResourceVersion))
	}
	if !crd.DeletionTimestamp.IsZero() {
		return r.Store.Delete(ctx, name, deleteValidation, options)
	}
	mark := func(existing runtime.Object) (runtime.Object, error) {
		c, ok := existing.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			return nil, fmt.Errorf("expected a CustomResourceDefinition, got %T", existing)
		}
		if err := deleteValidation(ctx, c); err != nil {
			return nil, err
		}
		if c.DeletionTimestamp.IsZero() {
			now := metav1.Now()
			c.DeletionTimestamp = &now
		}
		if !hasFinalizer(c, cleanupFinalizer) {
			c.Finalizers = append(c.Finalizers, cleanupFinalizer)
		}
		setCondition(c, apiextensionsv1.CustomResourceDefinitionCondition{
			Type:    apiextensionsv1.Terminating,
			Status:  apiextensionsv1.ConditionTrue,
			Reason:  "InstanceDeletionPending",
			Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
		})
		return c, nil
	}
	if len(options.DryRun) > 0 {
		out, err := mark(crd.DeepCopy())
		return out, false, err
	}
	key, err := r.Store.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	out := &apiextensionsv1.CustomResourceDefinition{}
	pre := &storage.Preconditions{UID: p.UID, ResourceVersion: p.ResourceVersion}
	if err := r.Store.Storage.GuaranteedUpdate(ctx, key, out, false, pre, mark, nil); err != nil {
		if _, ok := err.(apierrors.APIStatus); ok {
			return nil, false, err
		}
		return nil, false, generic.InterpretStorageError(err, crdResource, name)
	}
	return out, false, nil
}

// DeleteCollection implements rest.CollectionDeleter through Delete, so
// every CRD deleted goes through its finalizer.
func (r *CRDREST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions,
	listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	if listOptions == nil {
		listOptions = &metainternalversion.ListOptions{}
	}
	listed, err := r.Store.List(ctx, listOptions)
	if err != nil {
		return nil, err
	}
	out := &apiextensionsv1.CustomResourceDefinitionList{}
	if lm, err := meta.ListAccessor(listed); err == nil {
		out.ResourceVersion = lm.GetResourceVersion()
	}
	for _, crd := range listed.(*apiextensionsv1.CustomResourceDefinitionList).Items {
		var opts *metav1.DeleteOptions
		if options != nil {
			opts = options.DeepCopy()
		}
		obj, _, err := r.Delete(ctx, crd.Name, deleteValidation, opts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if c, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
			out.Items = append(out.Items, *c)
		}
	}
	return out, nil
}
