package storageversionmigration

import (
	"context"
	"strings"
	"testing"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// TestMigrationLifecycle: status cleared on create and written through
// /status only, spec.resource immutable, the generation unchanged (upstream's
// strategy sets none: it stays 0), upstream's printer columns.
func TestMigrationLifecycle(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("storagemigration.k8s.io", "v1", "storageversionmigrations", "")
	in := &storagemigrationv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "deployments"},
		Spec:       storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "apps", Resource: "deployments"}},
		Status:     storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "5"},
	}
	bad := in.DeepCopy()
	bad.Name = "A_b"
	_, err = store.Create(ctx, bad, nil, &metav1.CreateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid metadata.name" {
		t.Errorf("bad name: %s", got)
	}
	out, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.(*storagemigrationv1.StorageVersionMigration); s.Status.ResourceVersion != "" {
		t.Errorf("created with status %+v", s.Status)
	}
	_, _, err = store.Update(ctx, "deployments", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*storagemigrationv1.StorageVersionMigration).Spec.Resource.Resource = "replicasets"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid resource" {
		t.Errorf("spec update: %s", got)
	}
	// A main-resource update keeps the stored status.
	out, _, err = store.Update(ctx, "deployments", registrytest.Mutated{Mutate: func(o runtime.Object) {
		s := o.(*storagemigrationv1.StorageVersionMigration)
		s.Labels = map[string]string{"a": "b"}
		s.Status.ResourceVersion = "7"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.(*storagemigrationv1.StorageVersionMigration); s.Status.ResourceVersion != "" || s.Labels["a"] != "b" {
		t.Errorf("main update: %+v", s)
	}
	running := metav1.Condition{Type: "Running", Status: "True", Reason: "Started", LastTransitionTime: metav1.Now()}
	out, _, err = status.Update(ctx, "deployments", registrytest.Mutated{Mutate: func(o runtime.Object) {
		s := o.(*storagemigrationv1.StorageVersionMigration)
		s.Status.ResourceVersion = "9"
		s.Status.Conditions = []metav1.Condition{running}
		s.Spec.Resource.Resource = "ignored"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*storagemigrationv1.StorageVersionMigration)
	if s.Status.ResourceVersion != "9" || len(s.Status.Conditions) != 1 || s.Spec.Resource.Resource != "deployments" || s.Generation != 0 {
		t.Errorf("status update: %+v", s)
	}
	_, _, err = status.Update(ctx, "deployments", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*storagemigrationv1.StorageVersionMigration).Status.ResourceVersion = "10"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid status.resourceVersion" {
		t.Errorf("status rv change: %s", got)
	}
	tbl, err := store.ConvertToTable(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Columns and cells of kube-apiserver v1.37.2 (observed on that binary;
	// printStorageVersionMigration).
	if len(tbl.ColumnDefinitions) != 3 || tbl.ColumnDefinitions[0].Name != "Name" || tbl.ColumnDefinitions[1].Name != "Resource" ||
		tbl.ColumnDefinitions[2].Name != "Status" ||
		tbl.Rows[0].Cells[0] != "deployments" || tbl.Rows[0].Cells[1] != "deployments.apps" || tbl.Rows[0].Cells[2] != "Running" {
		t.Errorf("table %+v", tbl)
	}
	for _, tc := range []struct {
		conditions []metav1.Condition
		want       string
	}{
		{nil, "Unknown"},
		{[]metav1.Condition{{Type: "Running", Status: "False"}}, "Unknown"},
		{[]metav1.Condition{{Type: "Running", Status: "False"}, {Type: "Succeeded", Status: "True"}}, "Succeeded"},
		{[]metav1.Condition{{Type: "Failed", Status: "True"}}, "Failed"},
	} {
		s.Status.Conditions = tc.conditions
		tbl, err := TableConvertor.ConvertToTable(context.Background(), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := tbl.Rows[0].Cells[2]; got != tc.want {
			t.Errorf("conditions %v: status %v, want %s", tc.conditions, got, tc.want)
		}
	}
}
