package conversion

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

const fuzzUID = "0b0f2a3c-1111-4222-8333-944455556666"

// FuzzApplyResponse feeds arbitrary webhook answers to the decoding and
// checking of responses: it must never panic, must return *Error on
// failure, must not touch the sent objects, and on success must return
// one object per object sent, in the desired version, with the original
// identity.
func FuzzApplyResponse(f *testing.F) {
	seeds := []struct {
		beta bool
		body string
	}{
		{false, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"` + fuzzUID + `","result":{"status":"Success"},"convertedObjects":[{"apiVersion":"stable.example.com/v2","kind":"CronTab","metadata":{"name":"a","namespace":"default","uid":"uid-a","labels":{"x":"y"}},"spec":{"hostname":"h"}},{"apiVersion":"stable.example.com/v2","kind":"CronTab","metadata":{"name":"c","namespace":"default","uid":"uid-c"}}]}}`},
		{true, `{"response":{"result":{"status":"Success"},"convertedObjects":[{"apiVersion":"stable.example.com/v2","kind":"CronTab","metadata":{"name":"a","namespace":"default","uid":"uid-a"}},{"apiVersion":"stable.example.com/v2","kind":"CronTab","metadata":{"name":"c","namespace":"default","uid":"uid-c","annotations":{"a/b":"c"}}}]}}`},
		{false, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"` + fuzzUID + `","result":{"status":"Failure","message":"no"}}}`},
		{false, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"` + fuzzUID + `","result":{"status":"Success"},"convertedObjects":[null,{"kind":"CronTab"}]}}`},
		{false, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"` + fuzzUID + `","result":{"status":"Success"},"convertedObjects":[{"apiVersion":"stable.example.com/v2","kind":"CronTab","metadata":"x"},{"apiVersion":"stable.example.com/v2","kind":"CronTab","items":[]}]}}`},
		{false, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"` + fuzzUID + `","result":{"status":"Success"},"convertedObjects":[{"apiVersion":"stable.example.com/v2","kind":"CronTab","metadata":{"name":"a","namespace":"default","uid":"uid-a","labels":{"x":1}}},{"apiVersion":"stable.example.com/v2","kind":"CronTab","metadata":{"name":"c","namespace":"default","uid":"uid-c","labels":null,"annotations":[]}}]}}`},
		{true, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`},
		{false, `[]`},
		{false, `{"apiVersion":1}`},
		{true, ``},
	}
	for _, s := range seeds {
		f.Add(s.beta, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, beta bool, body []byte) {
		review := reviewV1
		if beta {
			review = reviewV1beta1
		}
		sent := []*unstructured.Unstructured{cronTab(gvV1, "a"), cronTab(gvV1, "c")}
		before := []*unstructured.Unstructured{sent[0].DeepCopy(), sent[1].DeepCopy()}
		listGVK := gvV1.WithKind("CronTabList")
		out, err := applyResponse(review, types.UID(fuzzUID), body, sent, gvV2, listGVK, false)
		for i := range sent {
			if !equalObjects(sent[i], before[i]) {
				t.Fatalf("sent object %d was mutated", i)
			}
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got error of type %T, want *Error", err)
			}
			return
		}
		if len(out) != len(sent) {
			t.Fatalf("got %d objects, want %d", len(out), len(sent))
		}
		for i, o := range out {
			if o.GetAPIVersion() != gvV2.String() || o.GetKind() != "CronTab" {
				t.Errorf("object %d: got %s %s, want %s CronTab", i, o.GetAPIVersion(), o.GetKind(), gvV2)
			}
			if o.GetName() != sent[i].GetName() || o.GetNamespace() != "default" || o.GetUID() != sent[i].GetUID() || o.GetResourceVersion() != "7" {
				t.Errorf("object %d: identity or metadata not restored: %v", i, o.Object["metadata"])
			}
		}
	})
}
