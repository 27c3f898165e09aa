package batchv1_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/kapi-dev/kapi/pkg/api/defaults/internal/goldentest"
)

// TestGoldenCorpus decodes each testdata/<case>.in.yaml as the API server
// decodes a request body (the scheme's decoder, which defaults) and
// compares it with testdata/<case>.want.yaml decoded without defaulting.
// Sources of the expected values: testdata/README.md and each file.
func TestGoldenCorpus(t *testing.T) {
	goldentest.Decoded(t, batchv1.SchemeGroupVersion)
}
