package resourceslice

import (
	"context"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// TestSliceFieldSelectorsAndTable: upstream's selectable fields
// (spec.nodeName, spec.driver, spec.pool.name) and printResourceSlice
// columns.
func TestSliceFieldSelectorsAndTable(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("resource.k8s.io", "v1", "resourceslices", "")
	for _, n := range []string{"node-1", "node-2"} {
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: n + "-gpu"}, Spec: resourcev1.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: ptr.To(n), Pool: resourcev1.ResourcePool{Name: n, ResourceSliceCount: 1},
		}}
		if _, err := store.Create(ctx, s, nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, sel := range []fields.Selector{
		fields.OneTermEqualSelector("spec.nodeName", "node-2"),
		fields.OneTermEqualSelector("spec.pool.name", "node-2"),
		fields.AndSelectors(fields.OneTermEqualSelector("spec.driver", "gpu.example.com"), fields.OneTermEqualSelector("metadata.name", "node-2-gpu")),
	} {
		out, err := store.List(ctx, &metainternalversion.ListOptions{FieldSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		if items := out.(*resourcev1.ResourceSliceList).Items; len(items) != 1 || items[0].Name != "node-2-gpu" {
			t.Errorf("%s: %d items", sel, len(items))
		}
	}
	out, err := store.Get(ctx, "node-1-gpu", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := TableConvertor.ConvertToTable(context.Background(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if got := tbl.Rows[0].Cells; len(names) != 5 || names[1] != "Node" || names[3] != "Pool" || got[1] != "node-1" || got[2] != "gpu.example.com" || got[3] != "node-1" {
		t.Errorf("columns %v cells %v", names, got)
	}
	// Upstream's words (pkg/apis/resource/v1/conversion.go, v1.37.2).
	if _, _, err := FieldLabelConversion("spec.devices", "x"); err == nil || err.Error() != "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.devices" {
		t.Errorf("spec.devices as a field label: %v, want upstream's refusal", err)
	}
}
