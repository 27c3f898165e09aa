// Package admissiontest has request attributes admission tests share.
package admissiontest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// ConfigMapUpdate is the update of ConfigMap default/a: a write that no
// plugin exempts and that carries both objects.
func ConfigMapUpdate() admission.Attributes {
	return admission.Attributes{
		Operation: admission.Update,
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind:      schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Namespace: "default", Name: "a",
		Object: &corev1.ConfigMap{}, OldObject: &corev1.ConfigMap{},
	}
}
