package generic

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta/metatest"
)

// validateMeta runs the update's metadata validation of u, as beforeUpdate
// does, on meta.
func validateMeta(meta, old metav1.Object) field.ErrorList {
	path := field.NewPath("metadata")
	errs := validation.ValidateObjectMetaAccessor(meta, true, validation.NameIsDNSSubdomain, path)
	return append(errs, validation.ValidateObjectMetaAccessorUpdate(meta, old, path)...)
}

// TestValidationMeta: the update's metadata validation gives the same
// errors through validationMeta as on the object itself.
func TestValidationMeta(t *testing.T) {
	for name, mf := range metatest.ManagedFieldsCases() {
		t.Run(name, func(t *testing.T) {
			u := metatest.Object(mf)
			old := &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "5"},
			}}
			if g, w := validateMeta(&validationMeta{Object: u}, old), validateMeta(u, old); !reflect.DeepEqual(g, w) {
				t.Errorf("validation with validationMeta: %v; without: %v", g, w)
			}
		})
	}
}

func TestValidationMetaReadsOnce(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}})
	vm := &validationMeta{Object: u}
	first := vm.GetManagedFields()
	u.SetManagedFields(nil)
	if second := vm.GetManagedFields(); len(second) != 1 || &first[0] != &second[0] {
		t.Fatalf("second read %v, want the first's %v", second, first)
	}
}

func BenchmarkValidateMetaUpdate(b *testing.B) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.kapi.dev/v1", "kind": "BenchThing",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "5", "managedFields": metatest.ManagedFieldsCases()["written"]},
	}}
	old := u.DeepCopy()
	b.Run("GetManagedFields", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			validateMeta(u, old)
		}
	})
	b.Run("validationMeta", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			validateMeta(&validationMeta{Object: u}, old)
		}
	})
}
