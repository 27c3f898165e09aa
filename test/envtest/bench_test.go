package envtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// referenceAPIServerEnv names an upstream kube-apiserver binary (or a
// directory holding one) for the reference variant of
// BenchmarkEnvtestStart; hack/build-reference.sh builds one.
const referenceAPIServerEnv = "KAPI_ENVTEST_REFERENCE_APISERVER"

// BenchmarkEnvtestStart is envtest's own Start (etcd and kube-apiserver
// processes to ready) and Stop; no CRDs.
//
//   - assets=kapi: both processes are kapi (linked as kube-apiserver and
//     etcd).
//   - assets=reference: kube-apiserver is the upstream binary named by
//     $KAPI_ENVTEST_REFERENCE_APISERVER, etcd is still kapi's etcd mode (no
//     etcd binary on this machine); skipped when the variable is unset.
//
// Both run in one benchmark so that their figures come from the same run.
func BenchmarkEnvtestStart(b *testing.B) {
	bin, err := buildKapi()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("assets=kapi", func(b *testing.B) {
		benchmarkEnvtestStart(b, bin, bin)
	})
	b.Run("assets=reference", func(b *testing.B) {
		ref := os.Getenv(referenceAPIServerEnv)
		if ref == "" {
			b.Skipf("%s is unset: set it to an upstream kube-apiserver binary (hack/build-reference.sh builds one) to measure envtest with the real kube-apiserver", referenceAPIServerEnv)
		}
		if fi, err := os.Stat(ref); err == nil && fi.IsDir() {
			ref = filepath.Join(ref, "kube-apiserver")
		}
		if fi, err := os.Stat(ref); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			b.Fatalf("%s=%s: not an executable kube-apiserver (%v)", referenceAPIServerEnv, os.Getenv(referenceAPIServerEnv), err)
		}
		benchmarkEnvtestStart(b, ref, bin)
	})
}

func benchmarkEnvtestStart(b *testing.B, apiserver, etcd string) {
	dir := b.TempDir()
	if err := installAssets(dir, apiserver, etcd); err != nil {
		b.Fatal(err)
	}
	b.Setenv("KUBEBUILDER_ASSETS", dir)
	var stop time.Duration
	for b.Loop() {
		env := &envtest.Environment{}
		if _, err := env.Start(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		t0 := time.Now()
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
		stop += time.Since(t0)
		b.StartTimer()
	}
	b.ReportMetric(float64(stop.Milliseconds())/float64(b.N), "stop-ms")
}

// installAssets makes dir a KUBEBUILDER_ASSETS directory whose
// kube-apiserver and etcd link to the given binaries.
func installAssets(dir, apiserver, etcd string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, bin := range map[string]string{"kube-apiserver": apiserver, "etcd": etcd} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}
