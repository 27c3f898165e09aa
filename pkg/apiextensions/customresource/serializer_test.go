package customresource

import (
	"bytes"
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// encodeTestObjects are custom resources whose JSON exercises
// encoding/json's escaping (HTML characters, control characters, U+2028,
// invalid UTF-8) and number formatting.
func encodeTestObjects() []*unstructured.Unstructured {
	obj := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1beta1",
			"kind":       "Thing",
			"metadata":   map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "12", "labels": map[string]any{"z": "1", "a": "2"}},
			"spec":       spec,
		}}
	}
	return []*unstructured.Unstructured{
		obj(map[string]any{"n": int64(0), "text": "plain", "tags": []any{"a", "b"}}),
		obj(map[string]any{"html": "<a href=\"x\">&amp;</a>", "ctl": "tab\there\nnew\x01\x1f\\", "ls": "a\u2028b\u2029c", "bad": "x\xffy", "uni": "héllo 世界 😀"}),
		obj(map[string]any{"f": 1.5, "tiny": 1e-7, "huge": 1e21, "neg": -0.000001, "max": int64(math.MaxInt64), "min": int64(math.MinInt64), "zero": 0.0}),
		obj(map[string]any{"nested": map[string]any{"b": []any{map[string]any{}, []any{}, nil, true, false}, "a": nil}, "": "empty key"}),
		{Object: map[string]any{"kind": "Thing"}},
	}
}

// TestEncoderPlainJSONMatchesSerializer: the direct encoding of a custom
// resource as compact JSON writes exactly what the JSON serializer writes
// for it (its apiVersion rewritten to the target version).
func TestEncoderPlainJSONMatchesSerializer(t *testing.T) {
	s := NewSerializer()
	info := s.SupportedMediaTypes()[0]
	target := schema.GroupVersion{Group: "example.com", Version: "v1"}
	enc := s.EncoderForVersion(info.Serializer, target).(encoder)
	if !enc.plainJSON {
		t.Fatal("the JSON serializer's encoder is not plainJSON")
	}
	for i, u := range encodeTestObjects() {
		var got, want bytes.Buffer
		if err := enc.Encode(u, &got); err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		if err := info.Serializer.Encode(withAPIVersion(u, target), &want); err != nil {
			t.Fatalf("object %d: serializer: %v", i, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("object %d:\n got %q\nwant %q", i, got.Bytes(), want.Bytes())
		}
	}
}

// TestEncoderPreservesObjects: Encode leaves every kind of object it gets
// unchanged (handlers.ObjectPreservingEncoder), in JSON, YAML and protobuf
// (which refuses the custom resources), whether or not the apiVersion is
// rewritten.
func TestEncoderPreservesObjects(t *testing.T) {
	s := NewSerializer()
	var objs []runtime.Object
	for _, u := range encodeTestObjects() {
		objs = append(objs, u)
	}
	objs = append(objs,
		&unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "example.com/v1beta1", "kind": "ThingList"}, Items: []unstructured.Unstructured{*encodeTestObjects()[0]}},
		&metav1.Status{Status: metav1.StatusFailure, Message: "m", Code: 404},
	)
	for _, info := range s.SupportedMediaTypes() {
		for _, target := range []runtime.GroupVersioner{
			schema.GroupVersion{Group: "example.com", Version: "v1"},
			schema.GroupVersion{Group: "example.com", Version: "v1beta1"},
		} {
			enc := s.EncoderForVersion(info.Serializer, target)
			if _, ok := enc.(interface{ PreservesObjects() }); !ok {
				t.Fatalf("%s: the encoder does not declare it preserves objects", info.MediaType)
			}
			for i, obj := range objs {
				before := obj.DeepCopyObject()
				var buf bytes.Buffer
				if err := enc.Encode(obj, &buf); err != nil {
					// Protobuf carries no custom resource itself (see
					// ServesObjectsAs): it must refuse them, unchanged.
					_, typed := obj.(*metav1.Status)
					if s.ServesObjectsAs(info.MediaType) || typed {
						t.Fatalf("%s, object %d: %v", info.MediaType, i, err)
					}
				}
				if !equality.Semantic.DeepEqual(before, obj) {
					t.Errorf("%s, object %d (%T) changed by Encode:\nbefore %#v\n after %#v", info.MediaType, i, obj, before, obj)
				}
			}
		}
	}
}
