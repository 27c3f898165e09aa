package podcertificaterequest

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// Resource is the resource served.
var Resource = certificatesv1.Resource("podcertificaterequests")

// FieldLabels are the field selector labels beyond metadata.name and
// metadata.namespace (upstream's getAttrs).
var FieldLabels = []string{"spec.signerName", "spec.podName", "spec.nodeName"}

// FieldLabelConversion accepts the field selector labels of
// certificates.k8s.io/v1 PodCertificateRequests.
var FieldLabelConversion = generic.FieldLabelConversion("metadata.name", "metadata.namespace", "spec.signerName", "spec.podName", "spec.nodeName")

// GetAttrs returns a request's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	if r, ok := obj.(*certificatesv1.PodCertificateRequest); ok {
		fs["spec.signerName"] = r.Spec.SignerName
		fs["spec.podName"] = r.Spec.PodName
		fs["spec.nodeName"] = string(r.Spec.NodeName)
	}
	return ls, fs, nil
}

// NewREST returns the store of podcertificaterequests and its status
// subresource, whose "sign" check asks authz (nil: every change of the
// certificate chain is refused) and whose clock is now (nil: time.Now).
func NewREST(opts generic.RESTOptions, authz authorizer.Authorizer, now func() time.Time) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, certificatesv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &certificatesv1.PodCertificateRequest{} },
		NewListFunc:               func() runtime.Object { return &certificatesv1.PodCertificateRequestList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: certificatesv1.Resource("podcertificaterequest"),
		GetAttrs:                  GetAttrs,
		FieldLabels:               FieldLabels,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	if now == nil {
		now = time.Now
	}
	return store, generic.NewStatusREST(store, statusStrategy{authz: authz, now: now}), nil
}
