package certificatesigningrequest

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func decode(t *testing.T, path string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := scheme.Codecs.UniversalDecoder(certificatesv1.SchemeGroupVersion).Decode(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := yaml.Marshal(obj)
	want, _ := yaml.Marshal(plain)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("decoding defaulted the request, v1 has no defaults (-want +got):\n%s", diff)
	}
	return obj.(*certificatesv1.CertificateSigningRequest)
}

// TestDocsCSRStored: the documentation's request is stored as written
// except the requester fields, which are the creating user's (upstream's
// csrStrategy.PrepareForCreate), and the status, which starts empty.
func TestDocsCSRStored(t *testing.T) {
	store, status, approval, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	in := decode(t, "testdata/csr-docs-myuser.yaml")
	in.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Approved", Status: "True"}}
	ctx := request.WithUser(registrytest.Context("certificates.k8s.io", "v1", "certificatesigningrequests", ""),
		&user.Info{Name: "jane", UID: "u-1", Groups: []string{"dev", "system:authenticated"}, Extra: map[string][]string{"scopes": {"a"}}})
	out, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr := out.(*certificatesv1.CertificateSigningRequest)
	wantSpec := certificatesv1.CertificateSigningRequestSpec{
		Request: in.Spec.Request, SignerName: "kubernetes.io/kube-apiserver-client", ExpirationSeconds: ptr.To[int32](86400),
		Usages: []certificatesv1.KeyUsage{"client auth"}, Username: "jane", UID: "u-1", Groups: []string{"dev", "system:authenticated"},
		Extra: map[string]certificatesv1.ExtraValue{"scopes": {"a"}},
	}
	if diff := cmp.Diff(wantSpec, csr.Spec); diff != "" {
		t.Errorf("stored spec (-want +got):\n%s", diff)
	}
	if len(csr.Status.Conditions) != 0 || len(csr.Status.Certificate) != 0 {
		t.Errorf("stored status %+v, want empty", csr.Status)
	}

	// The main resource changes metadata only.
	upd := csr.DeepCopy()
	upd.Labels = map[string]string{"a": "b"}
	upd.Spec.Username = "mallory"
	upd.Spec.Usages = []certificatesv1.KeyUsage{"server auth"}
	out, _, err = store.Update(ctx, csr.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*certificatesv1.CertificateSigningRequest); got.Labels["a"] != "b" || got.Spec.Username != "jane" || got.Spec.Usages[0] != "client auth" {
		t.Errorf("main update: labels %v username %s usages %v", got.Labels, got.Spec.Username, got.Spec.Usages)
	}

	// /status cannot approve (the Approved condition is dropped as
	// upstream's preserveConditionInstances keeps the stored ones, then
	// refused as an addition).
	_, _, err = status.Update(ctx, csr.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		c := o.(*certificatesv1.CertificateSigningRequest)
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: "Approved", Status: "True"})
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueForbidden status.conditions" {
		t.Errorf("approving through /status: %s", got)
	}
	// /approval approves; times are filled.
	before := time.Now().Add(-time.Second)
	out, _, err = approval.Update(ctx, csr.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		c := o.(*certificatesv1.CertificateSigningRequest)
		c.Spec.Username = "mallory"
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: "Approved", Status: corev1.ConditionTrue, Reason: "KubectlApprove"})
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*certificatesv1.CertificateSigningRequest)
	if len(got.Status.Conditions) != 1 || got.Spec.Username != "jane" || got.Status.Conditions[0].LastUpdateTime.Time.Before(before) || got.Status.Conditions[0].LastTransitionTime.IsZero() {
		t.Errorf("after approval: %+v, username %s", got.Status.Conditions, got.Spec.Username)
	}
	if Condition(got) != "Approved" {
		t.Errorf("condition cell %q", Condition(got))
	}
	// /status issues, and cannot remove the approval.
	_, _, err = status.Update(ctx, csr.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		c := o.(*certificatesv1.CertificateSigningRequest)
		c.Status.Certificate = []byte("not pem")
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid status.certificate" {
		t.Errorf("garbage certificate: %s", got)
	}

	// Field selector spec.signerName.
	other := in.DeepCopy()
	other.Name, other.Spec.SignerName = "other", "example.com/other"
	if _, err := store.Create(ctx, other, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := store.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.signerName", "example.com/other")})
	if err != nil {
		t.Fatal(err)
	}
	if items := list.(*certificatesv1.CertificateSigningRequestList).Items; len(items) != 1 || items[0].Name != "other" {
		t.Errorf("field selector listed %d items", len(items))
	}
}

// TestTable: upstream's printCertificateSigningRequest columns and cells
// (pkg/printers/internalversion/printers.go, v1.37).
func TestTable(t *testing.T) {
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "myuser", CreationTimestamp: metav1.NewTime(time.Now().Add(-3 * time.Minute))},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client", Username: "kubernetes-admin", ExpirationSeconds: ptr.To[int32](86400)},
		Status: certificatesv1.CertificateSigningRequestStatus{
			Conditions:  []certificatesv1.CertificateSigningRequestCondition{{Type: "Approved"}, {Type: "Failed"}},
			Certificate: []byte("x"),
		},
	}
	tbl, err := TableConvertor.ConvertToTable(context.Background(), csr, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "Name,Age,SignerName,Requestor,RequestedDuration,Condition" {
		t.Errorf("columns %s", got)
	}
	want := []any{"myuser", "3m", "kubernetes.io/kube-apiserver-client", "kubernetes-admin", "24h", "Approved,Failed,Issued"}
	if diff := cmp.Diff(want, tbl.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	csr.Spec.ExpirationSeconds, csr.Spec.SignerName = nil, ""
	csr.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: "Approved"}, {Type: "Denied"}}}
	tbl, _ = TableConvertor.ConvertToTable(context.Background(), csr, nil)
	if c := tbl.Rows[0].Cells; c[2] != "<none>" || c[4] != "<none>" || c[5] != "Denied" {
		t.Errorf("cells %v", c)
	}
}

// TestValidationAsDeclarative: Approved with Denied is the beta declarative
// +k8s:zeroOrOneOfMember rule's single error on status.conditions
// (k8s.io/kubernetes@v1.37.2 pkg/apis/certificates/v1/
// zz_generated.validations.go), after the handwritten errors, in place of
// the handwritten "mutually exclusive" errors on each entry. The want list
// is kube-apiserver v1.37.2's answer to the same PUT of /approval
// (kubectl replace --raw, 2026-11-27).
func TestValidationAsDeclarative(t *testing.T) {
	store, _, approval, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := request.WithUser(registrytest.Context("certificates.k8s.io", "v1", "certificatesigningrequests", ""), &user.Info{Name: "jane"})
	in := decode(t, "testdata/csr-docs-myuser.yaml")
	in.Name = "dv12-csr1"
	if _, err := store.Create(ctx, in, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = approval.Update(ctx, in.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*certificatesv1.CertificateSigningRequest).Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{
			{Type: "Approved", Status: "True", Reason: "r"}, {Type: "Denied", Status: "True", Reason: "r"}, {Type: "Approved", Status: "True"},
		}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	want := []string{
		`status.conditions[2].type: Duplicate value: "Approved"`,
		"status.conditions: Invalid value: \"{conditions[{\\\"type\\\": \\\"Approved\\\"}], conditions[{\\\"type\\\": \\\"Denied\\\"}]}\": must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`",
	}
	if got := registrytest.Messages(t, err); !slices.Equal(got, want) {
		t.Errorf("causes:\n got  %q\n want %q", got, want)
	}
}
