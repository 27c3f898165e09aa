package networkingv1_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// TestGoldenCorpus decodes each testdata/<case>.in.yaml as the API server
// decodes a request body (the scheme's decoder, which defaults) and
// compares it with testdata/<case>.want.yaml decoded without defaulting.
func TestGoldenCorpus(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no cases in testdata: %v", err)
	}
	defaulting := scheme.Codecs.UniversalDecoder(networkingv1.SchemeGroupVersion)
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
