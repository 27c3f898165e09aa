package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestFeatureEnabled: kapi serves kubernetes_feature_enabled{name,stage}
// as kube-apiserver v1.37.2 does with every feature gate at its default:
// the same HELP and TYPE lines and the same 254 series, byte for byte
// (testdata/metrics/feature_enabled.txt, read from the reference
// binary's /metrics; its header says how), on both storage backends.
func TestFeatureEnabled(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "metrics", "feature_enabled.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, golden, ok := bytes.Cut(data, []byte("\n\n")) // after the header
	if !ok {
		t.Fatal("feature_enabled.txt: no header")
	}
	want := familyLines(string(golden), "kubernetes_feature_enabled")
	if len(want) != 256 {
		t.Fatalf("golden file: %d lines, want HELP, TYPE and 254 series", len(want))
	}
	for _, backend := range []string{"memory", "etcd"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var opts []kapitest.Option
			if backend == "etcd" {
				opts = append(opts, kapitest.WithEmbeddedEtcd())
			}
			srv := kapitest.Start(t, opts...)
			got := familyLines(metricsText(t, srv.Config), "kubernetes_feature_enabled")
			gotSet := map[string]bool{}
			for _, l := range got {
				gotSet[l] = true
			}
			wantSet := map[string]bool{}
			for _, l := range want {
				wantSet[l] = true
				if !gotSet[l] {
					t.Errorf("missing: %s", l)
				}
			}
			for _, l := range got {
				if !wantSet[l] {
					t.Errorf("not served by the reference: %s", l)
				}
			}
			if len(got) != len(want) {
				t.Errorf("got %d lines, want %d", len(got), len(want))
			}
		})
	}
}
