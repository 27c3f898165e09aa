package controlplane

import (
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/certificatesigningrequest"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/clustertrustbundle"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/podcertificaterequest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// certificatesGroup is the table of certificates.k8s.io. kube-apiserver
// v1.37 serves v1 CertificateSigningRequests, ClusterTrustBundles and
// PodCertificateRequests by default (the v1alpha1 and v1beta1 versions
// are off by default; PodCertificateRequest is v1 from 1.37, k8s.io/api
// v0.37 certificates/v1 types.go "+k8s:prerelease-lifecycle-gen:introduced=1.37").
var certificatesGroup = apiGroup{name: certificatesv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "certificatesigningrequests", storage: csrStorage, fieldLabels: certificatesigningrequest.FieldLabelConversion},
		{name: "clustertrustbundles", storage: storeOf(clustertrustbundle.NewREST), fieldLabels: clustertrustbundle.FieldLabelConversion},
		{name: "podcertificaterequests", storage: pcrStorage, fieldLabels: podcertificaterequest.FieldLabelConversion},
	},
}}}

// csrStorage makes the CSRs' store with /status and /approval.
func csrStorage(b *storageBuilder) (resourceStorage, error) {
	st, status, approval, err := certificatesigningrequest.NewREST(b.opts)
	if err != nil {
		return resourceStorage{}, err
	}
	return resourceStorage{storage: st, subresources: map[string]rest.Storage{"status": status, "approval": approval}}, nil
}

// pcrStorage makes the PodCertificateRequests' store with /status, whose
// "sign" check asks the server's authorizer.
func pcrStorage(b *storageBuilder) (resourceStorage, error) {
	st, status, err := podcertificaterequest.NewREST(b.opts, b.config.Authorizer, nil)
	if err != nil {
		return resourceStorage{}, err
	}
	return resourceStorage{storage: st, subresources: map[string]rest.Storage{"status": status}}, nil
}
