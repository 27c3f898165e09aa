package podcertificaterequest

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var specDocs = certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()

// TableConvertor renders requests with the columns NAME PODNAME
// SERVICEACCOUNTNAME NODENAME SIGNERNAME STATE AGE, STATE being Issued,
// Denied or Failed after the terminal condition, else Pending. Upstream's
// printer for PodCertificateRequests (pkg/printers/internalversion
// printers.go) could not be read for v1.37: these columns are kapi's
// reading of it, unverified.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "PodName", Type: "string", Description: specDocs["podName"]},
		{Name: "ServiceAccountName", Type: "string", Description: specDocs["serviceAccountName"]},
		{Name: "NodeName", Type: "string", Description: specDocs["nodeName"]},
		{Name: "SignerName", Type: "string", Description: specDocs["signerName"]},
		{Name: "State", Type: "string", Description: "Is the request Pending, Issued, Denied, or Failed?"},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		r, ok := obj.(*certificatesv1.PodCertificateRequest)
		if !ok {
			return nil, false
		}
		state := "Pending"
		for _, c := range r.Status.Conditions {
			switch c.Type {
			case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
				if c.Status == metav1.ConditionTrue {
					state = c.Type
				}
			}
		}
		return []any{r.Name, r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName, state, table.Since(r.CreationTimestamp)}, true
	},
}
