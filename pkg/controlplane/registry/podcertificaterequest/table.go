package podcertificaterequest

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var specDocs = certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()

// TableConvertor renders requests as kube-apiserver v1.37.2 does
// (kubernetes/kubernetes pkg/printers/internalversion/printers.go,
// printPodCertificateRequest, at k8s.io/kubernetes v1.37.2; the columns were
// also observed on that binary): NAME PODNAME SERVICEACCOUNTNAME NODENAME
// SIGNERNAME STATE UNVERIFIEDUSERANNOTATIONS, no AGE. STATE is Issued,
// Denied or Failed after the last condition of one of those types, else
// Pending. The annotations cell is there because upstream's server-side
// printing always asks for the wide form (pkg/printers/storage); it is
// upstream's labels.FormatLabels of spec.unverifiedUserAnnotations
// ("<none>" when empty).
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "PodName", Type: "string", Description: specDocs["podName"]},
		{Name: "ServiceAccountName", Type: "string", Description: specDocs["serviceAccountName"]},
		{Name: "NodeName", Type: "string", Description: specDocs["nodeName"]},
		{Name: "SignerName", Type: "string", Description: specDocs["signerName"]},
		{Name: "State", Type: "string", Description: "Is the request Pending, Issued, Denied, or Failed?"},
		{Name: "UnverifiedUserAnnotations", Type: "string", Description: specDocs["unverifiedUserAnnotations"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		r, ok := obj.(*certificatesv1.PodCertificateRequest)
		if !ok {
			return nil, false
		}
		// Upstream does not look at the condition's status: validation
		// only admits these three condition types with status True.
		state := "Pending"
		for _, c := range r.Status.Conditions {
			switch c.Type {
			case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
				state = c.Type
			}
		}
		return []any{r.Name, r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName, state,
			labels.FormatLabels(r.Spec.UnverifiedUserAnnotations)}, true
	},
}
