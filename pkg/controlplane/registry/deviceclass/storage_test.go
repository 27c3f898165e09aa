package deviceclass

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
// answer metadata.name's format (+k8s:format=k8s-long-name, "bytes"),
// the selector and config list sizes (+k8s:maxItems=32), the opaque
// drivers (+k8s:required, +k8s:format=k8s-long-name-caseless,
// +k8s:maxLength=63) and spec.extendedResourceName's format, after the
// handwritten errors. testdata/declarative/NAME.json is a request body and
// NAME.txt kubectl's report of kube-apiserver v1.37.2's answer to it
// (kubectl create --raw /apis/resource.k8s.io/v1/deviceclasses -f
// NAME.json, 2026-11-27), verbatim.
func TestValidationAsDeclarative(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	store.GenerateNameFunc = func(base string) string { return base + "abcde" }
	ctx := registrytest.Context("resource.k8s.io", "v1", "deviceclasses", "")
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

	// generateName is not checked, the generated name is (upstream's
	// ValidateObjectMetaWithOpts); kube-apiserver v1.37.2 answered
	// generateName "Bad_" with the metadata.name error alone.
	_, err = store.Create(ctx, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{GenerateName: "Bad_"}}, nil, &metav1.CreateOptions{})
	want := []string{`metadata.name: Invalid value: "Bad_abcde": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}
	if got := registrytest.Messages(t, err); !slices.Equal(got, want) {
		t.Errorf("generateName causes:\n got  %q\n want %q", got, want)
	}

	// An update compiles the selectors again only when they changed; the
	// answer is kube-apiserver v1.37.2's to the same PUT.
	if _, err := store.Create(ctx, decode(t, []byte(`{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"dv12-dc5"},
		"spec":{"selectors":[{"cel":{"expression":"device.driver == \"x\""}}],"extendedResourceName":"example.com/gpu"}}`)), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = store.Update(ctx, "dv12-dc5", registrytest.Mutated{Mutate: func(o runtime.Object) {
		c := o.(*resourcev1.DeviceClass)
		c.Spec.ExtendedResourceName = ptr("kubernetes.io/x")
		c.Spec.Config = []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: resourcev1.DeviceConfiguration{
			Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: "Bad_D", Parameters: runtime.RawExtension{Raw: []byte(`{}`)}}}}}
		c.Spec.Selectors = append(c.Spec.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: "device.nope"}})
	}}, nil, nil, false, &metav1.UpdateOptions{})
	want = []string{
		"spec.selectors[1].cel.expression: Invalid value: \"device.nope\": compilation failed: ERROR: <input>:1:7: undefined field 'nope'\n | device.nope\n | ......^",
		`spec.config[0].opaque.driver: Invalid value: "Bad_D": an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		`spec.extendedResourceName: Invalid value: "kubernetes.io/x": must not have "kubernetes.io/" domain`,
	}
	if got := registrytest.Messages(t, err); !slices.Equal(got, want) {
		t.Errorf("update causes:\n got  %q\n want %q", got, want)
	}
}

func ptr[T any](v T) *T { return &v }
