package resourceclaim

import (
	"slices"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// TestValidationAsDeclarative checks whole error lists, order and words,
// against kube-apiserver v1.37.2, where beta declarative rules
// (k8s.io/kubernetes@v1.37.2 pkg/apis/resource/v1/zz_generated.validations.go)
// answer a claim's list sizes, uniqueness (the whole item as the value,
// before the items), subrequest device classes, allocation modes,
// tolerations, constraint attributes and opaque drivers, after the
// handwritten errors (pkg/apis/resource/validation), and the spec's
// immutability on update ("Invalid value: null", nothing else).
// testdata/declarative/NAME.json is a request body and NAME.txt kubectl's
// report of kube-apiserver v1.37.2's answer to it (kubectl create --raw
// .../namespaces/dv12-ns/resourceclaims -f NAME.json, 2026-11-27), verbatim.
func TestValidationAsDeclarative(t *testing.T) {
	store, _, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("resource.k8s.io", "v1", "resourceclaims", "dv12-ns")
	decode := func(t *testing.T, b []byte) runtime.Object {
		t.Helper()
		obj, _, err := scheme.Codecs.UniversalDecoder(resourcev1.SchemeGroupVersion).Decode(b, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	registrytest.Goldens(t, "testdata/declarative", func(t *testing.T, body []byte) error {
		_, err := store.Create(ctx, decode(t, body), nil, &metav1.CreateOptions{})
		return err
	})

	// An update that changes the spec is answered with its immutability
	// alone (kube-apiserver v1.37.2, the same PUT).
	if _, err := store.Create(ctx, decode(t, []byte(`{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"dv12-rcok"},
		"spec":{"devices":{"requests":[{"name":"a","exactly":{"deviceClassName":"c"}}]}}}`)), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = store.Update(ctx, "dv12-rcok", registrytest.Mutated{Mutate: func(o runtime.Object) {
		c := o.(*resourcev1.ResourceClaim)
		c.Labels = map[string]string{"a": "b"}
		c.Spec.Devices.Requests[0].Name = "Bad_"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	want := []string{"spec: Invalid value: null: field is immutable"}
	if got := registrytest.Messages(t, err); !slices.Equal(got, want) {
		t.Errorf("update causes:\n got  %q\n want %q", got, want)
	}
}
