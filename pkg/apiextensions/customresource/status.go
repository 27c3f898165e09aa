package customresource

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

type fieldValidationKey struct{}

// WithFieldValidation returns a context carrying the request's
// fieldValidation directive to the strategy.
func WithFieldValidation(ctx context.Context, directive string) context.Context {
	return context.WithValue(ctx, fieldValidationKey{}, directive)
}

// fieldValidationFrom returns ctx's directive; Warn when unset.
func fieldValidationFrom(ctx context.Context) string {
	if d, ok := ctx.Value(fieldValidationKey{}).(string); ok && d != "" {
		return d
	}
	return metav1.FieldValidationWarn
}

// StrictUnknownFields returns a 400 when obj has fields s does not
// specify: fieldValidation=Strict.
func StrictUnknownFields(obj runtime.Object, s *apiextensionsv1.JSONSchemaProps) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || s == nil {
		return nil
	}
	pruned := structuralschema.Prune(runtime.DeepCopyJSON(u.Object), s)
	if len(pruned) == 0 {
		return nil
	}
	msgs := make([]string, len(pruned))
	for i, p := range pruned {
		msgs[i] = fmt.Sprintf("unknown field %q", p)
	}
	return apierrors.NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
}

// StrictObjectInfo returns objInfo refusing updated objects with fields s
// does not specify (StrictUnknownFields).
func StrictObjectInfo(objInfo rest.UpdatedObjectInfo, s *apiextensionsv1.JSONSchemaProps) rest.UpdatedObjectInfo {
	return strictObjInfo{UpdatedObjectInfo: objInfo, schema: s}
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
	if err := StrictUnknownFields(obj, i.schema); err != nil {
		return nil, err
	}
	return obj, nil
}

// StatusStore is the /status subresource of a version: like the main
// resource, it passes fieldValidation on to the strategy (pruned fields
// are warnings under Warn, silent under Ignore) and refuses unknown
// fields under Strict.
type StatusStore struct {
	*generic.StatusREST
	schema *apiextensionsv1.JSONSchemaProps // structural schema, or nil
}

// NewStatusStore returns the /status subresource of store, whose
// strategy is strategy.
func NewStatusStore(store *generic.Store, strategy Strategy) *StatusStore {
	return &StatusStore{StatusREST: generic.NewStatusREST(store, strategy.StatusStrategy()), schema: strategy.schema}
}

// Update implements rest.Updater.
func (s *StatusStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	var directive string
	if options != nil {
		directive = options.FieldValidation
	}
	if directive == metav1.FieldValidationStrict {
		objInfo = StrictObjectInfo(objInfo, s.schema)
	}
	return s.StatusREST.Update(WithFieldValidation(ctx, directive), name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}
