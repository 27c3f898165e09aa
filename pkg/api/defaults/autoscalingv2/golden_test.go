package autoscalingv2_test

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/kapi-dev/kapi/pkg/api/defaults/internal/goldentest"
)

// TestGoldenCorpus decodes each testdata/<case>.in.yaml (v1 or v2) as the
// API server does into its storage version, v2 (v1's defaults, then the
// conversion), applies the defaults a storage read applies, and compares
// the result with testdata/<case>.want.yaml decoded without defaulting.
func TestGoldenCorpus(t *testing.T) {
	goldentest.Stored(t, autoscalingv2.SchemeGroupVersion)
}
