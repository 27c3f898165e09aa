package appsv1_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// TestGoldenCorpus decodes each testdata/<case>.in.yaml as the API server
// decodes a request body (the scheme's decoder, which defaults) and
// compares it with testdata/<case>.want.yaml decoded without defaulting.
// Sources of the expected values: testdata/README.md and each file.
func TestGoldenCorpus(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no cases in testdata: %v", err)
	}
	defaulting := scheme.Codecs.UniversalDecoder(appsv1.SchemeGroupVersion)
	plain := scheme.Codecs.UniversalDeserializer()
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			got := decodeFile(t, defaulting, in)
			want := decodeFile(t, plain, filepath.Join("testdata", name+".want.yaml"))
			if diff := cmp.Diff(toYAML(t, want), toYAML(t, got)); diff != "" {
				t.Errorf("defaulted %s differs from %s.want.yaml (-want +got):\n%s", in, name, diff)
			}
			// Defaulting is idempotent: a stored object read back is the same.
			again := got.DeepCopyObject()
			scheme.Scheme.Default(again)
			if diff := cmp.Diff(toYAML(t, got), toYAML(t, again)); diff != "" {
				t.Errorf("defaulting twice changes the object (-once +twice):\n%s", diff)
			}
		})
	}
}

func decodeFile(t *testing.T, d runtime.Decoder, path string) runtime.Object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := d.Decode(b, nil, nil)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return obj
}

func toYAML(t *testing.T, obj runtime.Object) string {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
