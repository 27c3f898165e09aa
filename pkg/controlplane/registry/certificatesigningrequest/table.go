package certificatesigningrequest

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

var (
	specDocs   = certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()
	statusDocs = certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()
)

// TableConvertor renders CSRs as upstream's printCertificateSigningRequest
// (kubernetes pkg/printers/internalversion/printers.go, v1.37): NAME AGE
// SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION, the descriptions from
// v1beta1's documentation as upstream takes them.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		table.AgeColumn,
		{Name: "SignerName", Type: "string", Description: specDocs["signerName"]},
		{Name: "Requestor", Type: "string", Description: specDocs["request"]},
		{Name: "RequestedDuration", Type: "string", Description: specDocs["expirationSeconds"]},
		{Name: "Condition", Type: "string", Description: statusDocs["conditions"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
		if !ok {
			return nil, false
		}
		signer := "<none>"
		if csr.Spec.SignerName != "" {
			signer = csr.Spec.SignerName
		}
		requested := "<none>"
		if csr.Spec.ExpirationSeconds != nil {
			requested = duration.HumanDuration(time.Duration(*csr.Spec.ExpirationSeconds) * time.Second)
		}
		return []any{csr.Name, table.Since(csr.CreationTimestamp), signer, csr.Spec.Username, requested, Condition(csr)}, true
	},
}

// Condition is a CSR's CONDITION cell (upstream's extractCSRStatus):
// Denied, else Approved, else Pending; then ",Failed" and ",Issued".
func Condition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	s := "Pending"
	switch {
	case denied:
		s = "Denied"
	case approved:
		s = "Approved"
	}
	if failed {
		s += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		s += ",Issued"
	}
	return s
}
