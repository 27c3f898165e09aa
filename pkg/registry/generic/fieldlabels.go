package generic

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
)

// FieldLabelConversion returns a field label conversion func (for
// runtime.Scheme.AddFieldLabelConversionFunc) that accepts exactly the
// given labels, unchanged, and rejects the others with kube's message
// "field label not supported: <label>".
func FieldLabelConversion(supported ...string) runtime.FieldLabelConversionFunc {
	return FieldLabelConversionRefusing(func(label string) error {
		return fmt.Errorf("field label not supported: %s", label)
	}, supported...)
}

// FieldLabelConversionRefusing is FieldLabelConversion for kinds whose
// upstream conversion words its refusal otherwise: refuse(label) is the
// error.
func FieldLabelConversionRefusing(refuse func(label string) error, supported ...string) runtime.FieldLabelConversionFunc {
	return func(label, value string) (string, string, error) {
		if slices.Contains(supported, label) {
			return label, value, nil
		}
		return "", "", refuse(label)
	}
}
