package clustertrustbundle

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func caPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now(),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestBundleLifecycle: a signer-prefixed name (":" is no DNS subdomain
// character) is accepted, the name rule and signer immutability apply
// through the store, one cause per bad name, no generation, the selectable
// spec.signerName and upstream's NAME SIGNERNAME columns.
func TestBundleLifecycle(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("certificates.k8s.io", "v1", "clustertrustbundles", "")
	in := &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:roots"},
		Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: caPEM(t)},
	}
	bad := in.DeepCopy()
	bad.Name = "roots"
	_, err = store.Create(ctx, bad, nil, &metav1.CreateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid metadata.name" {
		t.Errorf("unprefixed name: %s", got)
	}
	out, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := out.(*certificatesv1.ClusterTrustBundle)
	if b.Generation != 0 {
		t.Errorf("generation %d", b.Generation)
	}
	_, _, err = store.Update(ctx, b.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*certificatesv1.ClusterTrustBundle).Spec.SignerName = "example.com/other"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	causes := strings.Join(registrytest.Causes(t, err), ",")
	if !strings.Contains(causes, "FieldValueInvalid spec.signerName") {
		t.Errorf("signer change: %s", causes)
	}
	_, fs, err := GetAttrs(b)
	if err != nil || fs["spec.signerName"] != "example.com/signer" || fs["metadata.name"] != b.Name {
		t.Errorf("attrs %v %v", fs, err)
	}
	if _, _, err := FieldLabelConversion("spec.signerName", "x"); err != nil {
		t.Error(err)
	}
	if _, _, err := FieldLabelConversion("spec.trustBundle", "x"); err == nil {
		t.Error("spec.trustBundle accepted as a field label")
	}
	noSigner := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}
	tbl, err := TableConvertor.ConvertToTable(context.Background(), &certificatesv1.ClusterTrustBundleList{Items: []certificatesv1.ClusterTrustBundle{*b, *noSigner}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.ColumnDefinitions) != 2 || tbl.ColumnDefinitions[1].Name != "SignerName" ||
		tbl.Rows[0].Cells[1] != "example.com/signer" || tbl.Rows[1].Cells[1] != "<none>" {
		t.Errorf("table %+v", tbl)
	}
}
