package resourceclaimtemplate

import (
	"os"
	"slices"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// TestUpdateAnswer: an update of a template is validated as a new one and
// its spec is immutable. Templates have no declarative immutability rule,
// so the error is upstream's handwritten ValidateImmutableField on the
// internal type, its value rendered with the internal type's Go field
// names (labels of the embedded metadata flattened, nothing omitted).
// testdata/create.json and update.json are the bodies of a create and a
// PUT, update.txt kubectl's report of kube-apiserver v1.37.2's answer to
// the PUT (2026-11-27), verbatim.
func TestUpdateAnswer(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("resource.k8s.io", "v1", "resourceclaimtemplates", "dv12-ns")
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	decode := func(b []byte) runtime.Object {
		obj, _, err := scheme.Codecs.UniversalDecoder(resourcev1.SchemeGroupVersion).Decode(b, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	if _, err := store.Create(ctx, decode(read("create.json")), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = store.Update(ctx, "dv12-rctok", registrytest.Updated{Obj: decode(read("update.json"))}, nil, nil, false, &metav1.UpdateOptions{})
	got, want := registrytest.Messages(t, err), registrytest.KubectlCauses(t, string(read("update.txt")))
	if !slices.Equal(got, want) {
		t.Errorf("causes:\n got  %q\n want %q", got, want)
	}
}
