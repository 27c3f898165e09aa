package controlplane_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	certificatesv1 "k8s.io/api/certificates/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestLastStableResourcesThroughServer serves the stable kinds of issue 16
// that came last (StorageVersionMigrations, ...) from a full server on
// embedded etcd: discovery, create, list, watch and the status split,
// through client-go.
func TestLastStableResourcesThroughServer(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd())
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("storageversionmigrations", func(t *testing.T) { testStorageVersionMigrations(t, cs) })
	t.Run("clustertrustbundles", func(t *testing.T) { testClusterTrustBundles(t, cs) })
	t.Run("devicetaintrules", func(t *testing.T) { testDeviceTaintRules(t, cs) })
}

// discovered fails unless gv lists resource with the given namespaced
// scope.
func discovered(t *testing.T, cs kubernetes.Interface, gv, resource string, namespaced bool, verbs ...string) {
	t.Helper()
	list, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
	if err != nil {
		t.Fatalf("discovery %s: %v", gv, err)
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			if r.Namespaced != namespaced {
				t.Errorf("%s/%s: namespaced %v", gv, resource, r.Namespaced)
			}
			for _, v := range verbs {
				found := false
				for _, have := range r.Verbs {
					found = found || have == v
				}
				if !found {
					t.Errorf("%s/%s: no verb %s in %v", gv, resource, v, r.Verbs)
				}
			}
			return
		}
	}
	t.Errorf("%s: %s not discovered", gv, resource)
}

// nextEvent waits for the next event of w.
func nextEvent(t *testing.T, w watch.Interface) (watch.EventType, runtime.Object) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev.Type, ev.Object
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event in 30s")
	}
	return "", nil
}

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func testStorageVersionMigrations(t *testing.T, cs kubernetes.Interface) {
	ctx := t.Context()
	discovered(t, cs, "storagemigration.k8s.io/v1", "storageversionmigrations", false, allVerbs...)
	discovered(t, cs, "storagemigration.k8s.io/v1", "storageversionmigrations/status", false, "get", "patch", "update")
	c := cs.StoragemigrationV1().StorageVersionMigrations()
	w, err := c.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	in := &storagemigrationv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		Spec:       storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}},
		Status:     storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "1"},
	}
	got, err := c.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.ResourceVersion != "" {
		t.Errorf("status kept on create: %+v", got.Status)
	}
	if typ, obj := nextEvent(t, w); typ != watch.Added || obj.(*storagemigrationv1.StorageVersionMigration).Name != "secrets" {
		t.Errorf("watch: %s %v", typ, obj)
	}
	if _, err := c.Create(ctx, &storagemigrationv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err == nil ||
		!containsCause(err, "spec.resource.resource") {
		t.Errorf("create without resource: %v", err)
	}
	got.Status.ResourceVersion = "42"
	got.Status.Conditions = []metav1.Condition{{Type: "Running", Status: "True", Reason: "Started", LastTransitionTime: metav1.Now()}}
	got, err = c.UpdateStatus(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if typ, obj := nextEvent(t, w); typ != watch.Modified || obj.(*storagemigrationv1.StorageVersionMigration).Status.ResourceVersion != "42" {
		t.Errorf("watch: %s %v", typ, obj)
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Status.ResourceVersion != "42" {
		t.Fatalf("list: %v %+v", err, list)
	}
	if err := c.Delete(ctx, "secrets", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if typ, _ := nextEvent(t, w); typ != watch.Deleted {
		t.Errorf("watch: %s", typ)
	}
}

// containsCause reports whether err is a status error with a cause on
// field.
func containsCause(err error, field string) bool {
	type statusError interface{ Status() metav1.Status }
	se, ok := err.(statusError)
	if !ok || se.Status().Details == nil {
		return false
	}
	for _, c := range se.Status().Details.Causes {
		if c.Field == field {
			return true
		}
	}
	return false
}

// selfSignedCA returns a PEM CA certificate.
func selfSignedCA(t *testing.T) string {
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

func testClusterTrustBundles(t *testing.T, cs kubernetes.Interface) {
	ctx := t.Context()
	discovered(t, cs, "certificates.k8s.io/v1", "clustertrustbundles", false, allVerbs...)
	c := cs.CertificatesV1().ClusterTrustBundles()
	w, err := c.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=example.com/signer"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ca := selfSignedCA(t)
	for _, b := range []*certificatesv1.ClusterTrustBundle{
		{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: ca}},
		{ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:roots"}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: ca}},
	} {
		if _, err := c.Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", b.Name, err)
		}
	}
	if typ, obj := nextEvent(t, w); typ != watch.Added || obj.(*certificatesv1.ClusterTrustBundle).Name != "example.com:signer:roots" {
		t.Errorf("watch: %s %v", typ, obj)
	}
	list, err := c.List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=example.com/signer"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "example.com:signer:roots" {
		t.Fatalf("list by signer: %v %+v", err, list)
	}
	if _, err := c.Create(ctx, &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "empty"}}, metav1.CreateOptions{}); !containsCause(err, "spec.trustBundle") {
		t.Errorf("create without anchors: %v", err)
	}
	got, err := c.Get(ctx, "example.com:signer:roots", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.SignerName = "example.com/other"
	if _, err := c.Update(ctx, got, metav1.UpdateOptions{}); !containsCause(err, "spec.signerName") {
		t.Errorf("signer change: %v", err)
	}
	if err := c.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if typ, _ := nextEvent(t, w); typ != watch.Deleted {
		t.Errorf("watch: %s", typ)
	}
}

// Device taint rules: the taint's timeAdded defaulted on create and on
// server-side apply, generation and the status split.
func testDeviceTaintRules(t *testing.T, cs kubernetes.Interface) {
	ctx := t.Context()
	discovered(t, cs, "resource.k8s.io/v1", "devicetaintrules", false, allVerbs...)
	discovered(t, cs, "resource.k8s.io/v1", "devicetaintrules/status", false, "get", "patch", "update")
	c := cs.ResourceV1().DeviceTaintRules()
	w, err := c.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got, err := c.Create(ctx, &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Spec:       resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "example.com/broken", Effect: resourcev1.DeviceTaintEffectNoSchedule}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Taint.TimeAdded == nil || got.Generation != 1 {
		t.Errorf("created: timeAdded %v generation %d", got.Spec.Taint.TimeAdded, got.Generation)
	}
	if typ, _ := nextEvent(t, w); typ != watch.Added {
		t.Errorf("watch: %s", typ)
	}
	applied, err := c.Patch(ctx, "applied", types.ApplyPatchType,
		[]byte(`{"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule","metadata":{"name":"applied"},"spec":{"taint":{"key":"k","effect":"None"}}}`),
		metav1.PatchOptions{FieldManager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if applied.Spec.Taint.TimeAdded == nil {
		t.Error("apply: timeAdded not defaulted")
	}
	if _, err := c.Create(ctx, &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); !containsCause(err, "spec.taint.effect") {
		t.Errorf("create without effect: %v", err)
	}
	got.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
	if got, err = c.Update(ctx, got, metav1.UpdateOptions{}); err != nil || got.Generation != 2 {
		t.Fatalf("spec update: %v %+v", err, got)
	}
	got.Status.Conditions = []metav1.Condition{{Type: resourcev1.DeviceTaintConditionEvictionInProgress, Status: "False", Reason: "NoPods", LastTransitionTime: metav1.Now()}}
	if got, err = c.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil || len(got.Status.Conditions) != 1 {
		t.Fatalf("status update: %v %+v", err, got)
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("list: %v %+v", err, list)
	}
	if err := c.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}
