package apiextensions

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// TestStatusManagedFields checks that the status the controller writes is
// recorded in the CRD's managed fields as kube-apiserver's naming and
// establishing controllers leave it: an Update by "kube-apiserver" on the
// status subresource owning the accepted names and both conditions, beside
// the creator's entry.
//
// The expected fieldsV1 were recorded from kube-apiserver v1.37.2: a CRD
// of the same names as crdtest.NewCRD's widgets.example.com (shortNames
// [wi], categories [all]) created with `kubectl create
// --field-manager=creator`, then `kubectl get crd widgets.example.com -o
// json --show-managed-fields`.
func TestStatusManagedFields(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	c := crdtest.NewCRD("example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	if _, err := crds.Create(ctx, c, metav1.CreateOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	got := waitEstablished(t, ts.crdClient(t), c.Name)

	const wantStatus = `{"f:status":{"f:acceptedNames":{"f:categories":{},"f:kind":{},"f:listKind":{},"f:plural":{},"f:shortNames":{},"f:singular":{}},"f:conditions":{"k:{\"type\":\"Established\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\"type\":\"NamesAccepted\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`
	type entry struct {
		operation   metav1.ManagedFieldsOperationType
		subresource string
		apiVersion  string
		fields      string
	}
	byManager := map[string]entry{}
	for _, m := range got.ManagedFields {
		if _, dup := byManager[m.Manager]; dup {
			t.Errorf("two entries for manager %q: %+v", m.Manager, got.ManagedFields)
		}
		e := entry{operation: m.Operation, subresource: m.Subresource, apiVersion: m.APIVersion}
		if m.FieldsV1 != nil {
			e.fields = string(m.FieldsV1.Raw)
		}
		if m.FieldsType != "FieldsV1" || m.Time == nil {
			t.Errorf("manager %q: fieldsType %q, time %v; want FieldsV1 and a time", m.Manager, m.FieldsType, m.Time)
		}
		byManager[m.Manager] = e
	}
	if len(byManager) != 2 {
		t.Errorf("got managers %v, want creator and kube-apiserver", byManager)
	}
	want := entry{operation: metav1.ManagedFieldsOperationUpdate, subresource: "status", apiVersion: "apiextensions.k8s.io/v1", fields: wantStatus}
	if e := byManager["kube-apiserver"]; e != want {
		t.Errorf("kube-apiserver entry:\n got %+v\nwant %+v", e, want)
	}
	const wantSpec = `{"f:spec":{"f:conversion":{".":{},"f:strategy":{}},"f:group":{},"f:names":{"f:categories":{},"f:kind":{},"f:listKind":{},"f:plural":{},"f:shortNames":{},"f:singular":{}},"f:scope":{},"f:versions":{}}}`
	want = entry{operation: metav1.ManagedFieldsOperationUpdate, apiVersion: "apiextensions.k8s.io/v1", fields: wantSpec}
	if e := byManager["creator"]; e != want {
		t.Errorf("creator entry:\n got %+v\nwant %+v", e, want)
	}
}
