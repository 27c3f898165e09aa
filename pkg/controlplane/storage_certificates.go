package controlplane

import (
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/certificatesigningrequest"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/clustertrustbundle"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// certificatesGroup is the table of certificates.k8s.io. kube-apiserver
// v1.37 serves v1 CertificateSigningRequests and ClusterTrustBundles by
// default (the v1alpha1 and v1beta1 versions are off by default).
var certificatesGroup = apiGroup{name: certificatesv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "certificatesigningrequests", storage: csrStorage, fieldLabels: certificatesigningrequest.FieldLabelConversion},
		{name: "clustertrustbundles", storage: storeOf(clustertrustbundle.NewREST), fieldLabels: clustertrustbundle.FieldLabelConversion},
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
