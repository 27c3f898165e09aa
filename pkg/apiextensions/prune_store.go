package apiextensions

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Create implements rest.Creater: it passes fieldValidation on to the
// strategy and, under Strict, refuses unknown fields.
func (s *crStore) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	var directive string
	if options != nil {
		directive = options.FieldValidation
	}
	if directive == metav1.FieldValidationStrict {
		if err := customresource.StrictUnknownFields(obj, s.schema); err != nil {
			return nil, err
		}
	}
	return s.Store.Create(customresource.WithFieldValidation(ctx, directive), obj, createValidation, options)
}

// Update implements rest.Updater as Create.
func (s *crStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	var directive string
	if options != nil {
		directive = options.FieldValidation
	}
	if directive == metav1.FieldValidationStrict {
		objInfo = customresource.StrictObjectInfo(objInfo, s.schema)
	}
	return s.Store.Update(customresource.WithFieldValidation(ctx, directive), name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}
