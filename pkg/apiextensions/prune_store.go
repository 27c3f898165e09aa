package apiextensions

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

type fieldValidationKey struct{}

// withFieldValidation returns a context carrying the request's
// fieldValidation directive to the strategy.
func withFieldValidation(ctx context.Context, directive string) context.Context {
	return context.WithValue(ctx, fieldValidationKey{}, directive)
}

// fieldValidationFrom returns ctx's directive; Warn when unset.
func fieldValidationFrom(ctx context.Context) string {
	if d, ok := ctx.Value(fieldValidationKey{}).(string); ok && d != "" {
		return d
	}
	return metav1.FieldValidationWarn
}

// strictUnknownFields returns a 400 when obj has fields s does not
// specify: fieldValidation=Strict.
func strictUnknownFields(obj runtime.Object, s *apiextensionsv1.JSONSchemaProps) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || s == nil {
		return nil
	}
	pruned := prune(runtime.DeepCopyJSON(u.Object), s)
	if len(pruned) == 0 {
		return nil
	}
	msgs := make([]string, len(pruned))
	for i, p := range pruned {
		msgs[i] = fmt.Sprintf("unknown field %q", p)
	}
	return apierrors.NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
}

// Create implements rest.Creater: it passes fieldValidation on to the
// strategy and, under Strict, refuses unknown fields.
func (s *crStore) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	var directive string
	if options != nil {
		directive = options.FieldValidation
	}
	if directive == metav1.FieldValidationStrict {
		if err := strictUnknownFields(obj, s.schema); err != nil {
			return nil, err
		}
	}
	return s.Store.Create(withFieldValidation(ctx, directive), obj, createValidation, options)
}

// Update implements rest.Updater as Create.
func (s *crStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	var directive string
	if options != nil {
		directive = options.FieldValidation
	}
	if directive == metav1.FieldValidationStrict {
		objInfo = strictObjInfo{UpdatedObjectInfo: objInfo, schema: s.schema}
	}
	return s.Store.Update(withFieldValidation(ctx, directive), name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// strictObjInfo refuses updated objects with unknown fields.
type strictObjInfo struct {
	rest.UpdatedObjectInfo
	schema *apiextensionsv1.JSONSchemaProps
}

func (i strictObjInfo) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := i.UpdatedObjectInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	if err := strictUnknownFields(obj, i.schema); err != nil {
		return nil, err
	}
	return obj, nil
}

// statusStore is the /status subresource of a version: like the main
// resource, it passes fieldValidation on to the strategy (pruned fields
// are warnings under Warn, silent under Ignore) and refuses unknown
// fields under Strict.
type statusStore struct {
	*generic.StatusREST
	schema *apiextensionsv1.JSONSchemaProps // structural schema, or nil
}

// Update implements rest.Updater.
func (s *statusStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	var directive string
	if options != nil {
		directive = options.FieldValidation
	}
	if directive == metav1.FieldValidationStrict {
		objInfo = strictObjInfo{UpdatedObjectInfo: objInfo, schema: s.schema}
	}
	return s.StatusREST.Update(withFieldValidation(ctx, directive), name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}
