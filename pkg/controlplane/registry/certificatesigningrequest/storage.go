package certificatesigningrequest

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// Resource is the resource served.
var Resource = certificatesv1.Resource("certificatesigningrequests")

// FieldLabels are the field selector labels beyond metadata.name
// (upstream's SelectableFields: spec.signerName).
var FieldLabels = []string{"spec.signerName"}

// FieldLabelConversion accepts the field selector labels of
// certificates.k8s.io/v1 CSRs, for the scheme's AddFieldLabelConversionFunc.
var FieldLabelConversion = generic.FieldLabelConversion("metadata.name", "spec.signerName")

// GetAttrs returns a CSR's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	if csr, ok := obj.(*certificatesv1.CertificateSigningRequest); ok {
		fs["spec.signerName"] = csr.Spec.SignerName
	}
	return ls, fs, nil
}

// NewREST returns the store of certificatesigningrequests (short name
// "csr") and its status and approval subresources, on the storage opts
// makes for them.
func NewREST(opts generic.RESTOptions) (store *generic.Store, status, approval *generic.StatusREST, err error) {
	store, err = generic.NewStore(opts, certificatesv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
		NewListFunc:               func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: certificatesv1.Resource("certificatesigningrequest"),
		ResourceShortNames:        []string{"csr"},
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		// Upstream accepts any name (ValidateCertificateRequestName);
		// a name must still be usable as a path segment.
		NameValidator:  generic.ValidatePathSegmentName,
		CreateStrategy: Strategy,
		UpdateStrategy: Strategy,
		TableConvertor: TableConvertor,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), generic.NewStatusREST(store, ApprovalStrategy), nil
}
