package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func configMap(mut func(*corev1.ConfigMap)) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", ResourceVersion: "1"},
		Data:       map[string]string{"a.key": "v"},
	}
	if mut != nil {
		mut(cm)
	}
	return cm
}

func TestValidateConfigMap(t *testing.T) {
	half := strings.Repeat("x", corev1.MaxSecretSize/2)
	cases := []struct {
		name string
		cm   *corev1.ConfigMap
		want []string
	}{
		{"valid", configMap(nil), nil},
		{"valid binary", configMap(func(c *corev1.ConfigMap) { c.BinaryData = map[string][]byte{"bin": {0, 1}} }), nil},
		{"bad name", configMap(func(c *corev1.ConfigMap) { c.Name = "Bad_Name" }), []string{invalid + " metadata.name"}},
		{"missing namespace", configMap(func(c *corev1.ConfigMap) { c.Namespace = "" }), []string{required + " metadata.namespace"}},
		{"bad keys", configMap(func(c *corev1.ConfigMap) {
			c.Data = map[string]string{"a b": "", "..": ""}
			c.BinaryData = map[string][]byte{"c/d": nil}
		}), []string{
			invalid + " data[..]",
			invalid + " data[a b]",
			invalid + " binaryData[c/d]",
		}},
		{"duplicate key", configMap(func(c *corev1.ConfigMap) { c.BinaryData = map[string][]byte{"a.key": nil} }),
			[]string{invalid + " data[a.key]"}},
		{"exactly the limit", configMap(func(c *corev1.ConfigMap) {
			c.Data = map[string]string{"a": half}
			c.BinaryData = map[string][]byte{"b": []byte(half)}
		}), nil},
		{"over the limit", configMap(func(c *corev1.ConfigMap) {
			c.Data = map[string]string{"a": half}
			c.BinaryData = map[string][]byte{"b": []byte(half + "x")}
		}), []string{tooLong + " []"}},
		{"unqualified finalizer", configMap(func(c *corev1.ConfigMap) { c.Finalizers = []string{"mine"} }),
			[]string{invalid + " metadata.finalizers[0]"}},
		{"standard finalizer", configMap(func(c *corev1.ConfigMap) { c.Finalizers = []string{"orphan"} }), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateConfigMap(tc.cm), tc.want...)
		})
	}
	checkDetail(t, ValidateConfigMap(configMap(func(c *corev1.ConfigMap) { c.BinaryData = map[string][]byte{"a.key": nil} })),
		"data[a.key]", "duplicate of key present in binaryData")
	checkDetail(t, ValidateConfigMap(configMap(func(c *corev1.ConfigMap) { c.Data = map[string]string{"a": half + half + "x"} })),
		"[]", "may not be more than 1048576 bytes")
}

func TestValidateConfigMapFieldsSkipsGenericMetadata(t *testing.T) {
	cm := configMap(func(c *corev1.ConfigMap) { c.Name = "Bad_Name"; c.Data = map[string]string{"a b": ""} })
	checkErrs(t, ValidateConfigMapFields(cm), invalid+" data[a b]")
}

func TestValidateConfigMapUpdate(t *testing.T) {
	immutable := func(c *corev1.ConfigMap) { c.Immutable = ptr(true) }
	cases := []struct {
		name     string
		old, new *corev1.ConfigMap
		want     []string
	}{
		{"mutable change", configMap(nil), configMap(func(c *corev1.ConfigMap) { c.Data["b"] = "x" }), nil},
		{"set immutable", configMap(nil), configMap(immutable), nil},
		{"immutable unchanged", configMap(immutable), configMap(func(c *corev1.ConfigMap) {
			immutable(c)
			c.Labels = map[string]string{"a": "b"}
		}), nil},
		{"immutable data change", configMap(immutable), configMap(func(c *corev1.ConfigMap) {
			immutable(c)
			c.Data["a.key"] = "other"
		}), []string{forbidden + " data"}},
		{"immutable binaryData change", configMap(immutable), configMap(func(c *corev1.ConfigMap) {
			immutable(c)
			c.BinaryData = map[string][]byte{"b": nil}
		}), []string{forbidden + " binaryData"}},
		{"unset immutable", configMap(immutable), configMap(nil), []string{forbidden + " immutable"}},
		{"immutable false", configMap(immutable), configMap(func(c *corev1.ConfigMap) { c.Immutable = ptr(false) }),
			[]string{forbidden + " immutable"}},
		{"rename", configMap(nil), configMap(func(c *corev1.ConfigMap) { c.Name = "other" }), []string{invalid + " metadata.name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateConfigMapUpdate(tc.new, tc.old), tc.want...)
		})
	}
	errs := ValidateConfigMapUpdateFields(configMap(func(c *corev1.ConfigMap) { c.Data = nil }), configMap(immutable))
	checkErrs(t, errs, forbidden+" immutable", forbidden+" data")
	checkDetail(t, errs, "data", "field is immutable when `immutable` is set")
}
