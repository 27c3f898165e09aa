package fieldmanager

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// FuzzApply: whatever configuration a client applies, Apply neither
// panics nor fails with anything but an API status (a 4xx).
func FuzzApply(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"x":"2"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"b"}},"binaryData":{"b":"AAE="}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"x":1}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","finalizers":["a","a"]}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","ownerReferences":[{"uid":"1"},{"uid":"1"}]}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":"c"}`,
		`{"apiVersion":"v1","kind":"ConfigMap","immutable":"yes"}`,
		`{"apiVersion":"v1","kind":"ConfigMap","spec":{}}`,
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  k: a\n  k: b\n",
		`{"apiVersion":"v1","kind":"Secret"}`,
		`{}`,
		`null`,
	} {
		f.Add([]byte(seed))
	}
	m, err := New(Config{Kind: configMapKind})
	if err != nil {
		f.Fatal(err)
	}
	live, err := m.Apply(&corev1.ConfigMap{}, applied(configMap("c", map[string]any{"x": "1"})), "owner", false)
	if err != nil {
		f.Fatal(err)
	}
	live.(metav1.Object).SetUID("0d5cd2b2-7c43-4c37-8d3a-3f3c5b1a5e7e")
	f.Fuzz(func(t *testing.T, body []byte) {
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		if err := yaml.Unmarshal(body, &obj.Object); err != nil {
			return // the handler answers 400 error decoding YAML
		}
		for _, force := range []bool{false, true} {
			_, err := m.Apply(live.DeepCopyObject(), obj.DeepCopy(), "fuzzer", force)
			var status apierrors.APIStatus
			if err != nil && !errors.As(err, &status) {
				t.Fatalf("apply %q (force %v): got %v, want an API status", body, force, err)
			}
			if err != nil && status.Status().Code >= 500 {
				t.Fatalf("apply %q (force %v): got %d %v, want a client error", body, force, status.Status().Code, err)
			}
		}
	})
}
