package appsv1_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/defaults/internal/goldentest"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// TestGoldenCorpus decodes each testdata/<case>.in.yaml as the API server
// decodes a request body (the scheme's decoder, which defaults) and
// compares it with testdata/<case>.want.yaml decoded without defaulting.
// Sources of the expected values: testdata/README.md and each file.
func TestGoldenCorpus(t *testing.T) {
	goldentest.Decoded(t, appsv1.SchemeGroupVersion)
}

// TestStorageReadsDefault: an object stored without defaults (written by
// an older server, or by hand) is defaulted when the storage codecs read
// it, in JSON (memory backend) and protobuf (etcd).
func TestStorageReadsDefault(t *testing.T) {
	bare := &appsv1.StatefulSet{}
	bare.Name = "old"
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			t.Fatalf("no serializer for %s", mediaType)
		}
		gv := appsv1.SchemeGroupVersion
		codec := scheme.Codecs.CodecForVersions(info.Serializer, scheme.Codecs.UniversalDecoder(gv), gv, gv)
		data, err := runtime.Encode(codec, bare)
		if err != nil {
			t.Fatal(err)
		}
		got := &appsv1.StatefulSet{}
		if err := runtime.DecodeInto(codec, data, got); err != nil {
			t.Fatalf("%s: %v", mediaType, err)
		}
		if got.Spec.Replicas == nil || *got.Spec.Replicas != 1 || got.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement ||
			got.Spec.Template.Spec.RestartPolicy != "Always" {
			t.Errorf("%s: read back %+v, want defaults", mediaType, got.Spec)
		}
	}
}
