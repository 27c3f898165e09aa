package podcertificaterequest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The expected columns are those observed on kube-apiserver v1.37.2 built
// from the k8s.io/kubernetes v1.37.2 module (hack/build-reference.sh), a
// Table request for podcertificaterequests; the cells follow its printer
// (pkg/printers/internalversion/printers.go printPodCertificateRequest at
// v1.37.2, always wide on the server: pkg/printers/storage).
func TestTable(t *testing.T) {
	req := func(annotations map[string]string, conditions ...string) *certificatesv1.PodCertificateRequest {
		r := &certificatesv1.PodCertificateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "pcr-1", Namespace: "default"},
			Spec: certificatesv1.PodCertificateRequestSpec{PodName: "web-0", ServiceAccountName: "default", NodeName: "node-1",
				SignerName: "example.com/pods", UnverifiedUserAnnotations: annotations},
		}
		for _, c := range conditions {
			r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue})
		}
		return r
	}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), req(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
		if c.Description == "" {
			t.Errorf("column %s has no description", c.Name)
		}
	}
	if diff := cmp.Diff([]string{"Name", "PodName", "ServiceAccountName", "NodeName", "SignerName", "State", "UnverifiedUserAnnotations"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		obj  *certificatesv1.PodCertificateRequest
		want []any
	}{
		{"pending", req(nil), []any{"pcr-1", "web-0", "default", "node-1", "example.com/pods", "Pending", "<none>"}},
		{"issued", req(map[string]string{"b.example.com/x": "2", "a.example.com/y": "1"}, "Issued"),
			[]any{"pcr-1", "web-0", "default", "node-1", "example.com/pods", "Issued", "a.example.com/y=1,b.example.com/x=2"}},
		{"denied", req(nil, "Denied"), []any{"pcr-1", "web-0", "default", "node-1", "example.com/pods", "Denied", "<none>"}},
		{"failed", req(nil, "Failed"), []any{"pcr-1", "web-0", "default", "node-1", "example.com/pods", "Failed", "<none>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := TableConvertor.ConvertToTable(t.Context(), tc.obj, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tbl.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
