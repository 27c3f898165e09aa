package handlers

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta/metatest"
)

// TestPartialSourceSameMetadata: the PartialObjectMetadata of a custom
// resource made through partialSource is the one apimachinery makes of
// the object itself, and encodes to the same bytes.
func TestPartialSourceSameMetadata(t *testing.T) {
	for name, mf := range metatest.ManagedFieldsCases() {
		t.Run(name, func(t *testing.T) {
			u := metatest.Object(mf)
			u.SetLabels(map[string]string{"a": "b"})
			want := meta.AsPartialObjectMetadata(u)
			got := meta.AsPartialObjectMetadata(partialSource(u))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("partialSource: %#v\nobject: %#v", got, want)
			}
			wb, werr := json.Marshal(want)
			gb, gerr := json.Marshal(got)
			if string(wb) != string(gb) || (werr == nil) != (gerr == nil) {
				t.Fatalf("encoded: %s (%v)\nobject's: %s (%v)", gb, gerr, wb, werr)
			}
		})
	}
	typed := &metav1.ObjectMeta{Name: "a"}
	if partialSource(typed) != metav1.Object(typed) {
		t.Error("a typed object's metadata is not used as it is")
	}
}
