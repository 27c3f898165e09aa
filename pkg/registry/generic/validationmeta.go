package generic

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta"
)

// validationMeta is the metadata of an object being validated, its
// managed fields read once: apimachinery's ValidateObjectMetaAccessor and
// ValidateObjectMetaAccessorUpdate each call GetManagedFields on the new
// object, which for a custom resource (*unstructured.Unstructured)
// converts every entry by reflection, fieldsV1 through a JSON round trip.
// The validators only read the entries, and not their fieldsV1
// (unstructuredmeta.ManagedFieldsForValidation).
type validationMeta struct {
	metav1.Object
	managedFields []metav1.ManagedFieldsEntry
	read          bool
}

func (m *validationMeta) GetManagedFields() []metav1.ManagedFieldsEntry {
	if !m.read {
		m.managedFields, m.read = unstructuredmeta.ManagedFieldsForValidation(m.Object), true
	}
	return m.managedFields
}
