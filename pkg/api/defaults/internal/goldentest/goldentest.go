package goldentest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// Decoded checks the corpus in the test's testdata directory: each
// <case>.in.yaml decoded as the API server decodes a request body into gv
// (the scheme's decoder, which defaults) must equal <case>.want.yaml
// decoded without defaulting, and defaulting the result again must not
// change it (a stored object read back is the same).
func Decoded(t *testing.T, gv schema.GroupVersion) {
	t.Helper()
	run(t, gv, false)
}

// Stored checks the corpus in the test's testdata directory for a storage
// version gv: each <case>.in.yaml (in any served version) decoded into gv
// (its version's defaults, then the conversion), then given the defaults
// a storage read applies, must equal <case>.want.yaml decoded without
// defaulting.
func Stored(t *testing.T, gv schema.GroupVersion) {
	t.Helper()
	run(t, gv, true)
}

// run decodes each case into gv. stored: the scheme's defaults are applied
// after the decode (as a storage read does); otherwise defaulting again
// is checked to change nothing.
func run(t *testing.T, gv schema.GroupVersion, stored bool) {
	t.Helper()
	what := "defaulted"
	if stored {
		what = "stored"
	}
	ins, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no cases in testdata: %v", err)
	}
	decoder := scheme.Codecs.UniversalDecoder(gv)
	plain := scheme.Codecs.UniversalDeserializer()
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			got := decodeFile(t, decoder, in)
			if stored {
				scheme.Scheme.Default(got)
			}
			want := decodeFile(t, plain, filepath.Join("testdata", name+".want.yaml"))
			if diff := cmp.Diff(toYAML(t, want), toYAML(t, got)); diff != "" {
				t.Errorf("%s %s differs from %s.want.yaml (-want +got):\n%s", what, in, name, diff)
			}
			if !stored {
				again := got.DeepCopyObject()
				scheme.Scheme.Default(again)
				if diff := cmp.Diff(toYAML(t, got), toYAML(t, again)); diff != "" {
					t.Errorf("defaulting twice changes the object (-once +twice):\n%s", diff)
				}
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

// toYAML renders obj canonically (quantities in their canonical form,
// fields in their declared order).
func toYAML(t *testing.T, obj runtime.Object) string {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
