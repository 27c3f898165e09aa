package autoscalingv2_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// TestGoldenCorpus decodes each testdata/<case>.in.yaml (v1 or v2) as the
// API server does into its storage version, v2 (v1's defaults, then the
// conversion), applies the defaults a storage read applies, and compares
// the result with testdata/<case>.want.yaml decoded without defaulting.
func TestGoldenCorpus(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no cases in testdata: %v", err)
	}
	toStorage := scheme.Codecs.UniversalDecoder(autoscalingv2.SchemeGroupVersion)
	plain := scheme.Codecs.UniversalDeserializer()
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			got := decodeFile(t, toStorage, in)
			scheme.Scheme.Default(got)
			want := decodeFile(t, plain, filepath.Join("testdata", name+".want.yaml"))
			if diff := cmp.Diff(toYAML(t, want), toYAML(t, got)); diff != "" {
				t.Errorf("stored %s differs from %s.want.yaml (-want +got):\n%s", in, name, diff)
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
