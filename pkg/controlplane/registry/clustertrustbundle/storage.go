package clustertrustbundle

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/certificates"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// Resource is the resource served.
var Resource = certificatesv1.Resource("clustertrustbundles")

// FieldLabels are the field selector labels beyond metadata.name
// (upstream's SelectableFields: spec.signerName).
var FieldLabels = []string{"spec.signerName"}

// FieldLabelConversion accepts the field selector labels of
// certificates.k8s.io/v1 ClusterTrustBundles.
var FieldLabelConversion = generic.FieldLabelConversion("metadata.name", "spec.signerName")

// GetAttrs returns a bundle's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	if b, ok := obj.(*certificatesv1.ClusterTrustBundle); ok {
		fs["spec.signerName"] = b.Spec.SignerName
	}
	return ls, fs, nil
}

// NewREST returns the store of clustertrustbundles.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, certificatesv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} },
		NewListFunc:               func() runtime.Object { return &certificatesv1.ClusterTrustBundleList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: certificatesv1.Resource("clustertrustbundle"),
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		// The name rule depends on spec.signerName ("<signer with : for
		// />:<name>"): the strategy checks it; the store only needs a path
		// segment.
		NameValidator:  generic.ValidatePathSegmentName,
		CreateStrategy: Strategy,
		UpdateStrategy: Strategy,
		TableConvertor: TableConvertor,
	})
}

type strategy struct{}

// Strategy is the create and update strategy of bundles.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy = Strategy
	_ generic.UpdateStrategy = Strategy
)

func (strategy) NamespaceScoped() bool                                            { return false }
func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return certificates.ValidateClusterTrustBundle(obj.(*certificatesv1.ClusterTrustBundle), true)
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return certificates.ValidateClusterTrustBundleUpdate(obj.(*certificatesv1.ClusterTrustBundle), old.(*certificatesv1.ClusterTrustBundle))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object) {}
func (strategy) AllowCreateOnUpdate() bool   { return false }

// AllowUnconditionalUpdate is false as upstream's.
func (strategy) AllowUnconditionalUpdate() bool { return false }

// TableConvertor renders bundles as upstream's printClusterTrustBundle
// (pkg/printers/internalversion/printers.go, v1.37): NAME SIGNERNAME, no
// age column.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "SignerName", Type: "string", Description: certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		b, ok := obj.(*certificatesv1.ClusterTrustBundle)
		if !ok {
			return nil, false
		}
		signer := b.Spec.SignerName
		if signer == "" {
			signer = "<none>"
		}
		return []any{b.Name, signer}, true
	},
}
