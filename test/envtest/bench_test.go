package envtest

import (
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// BenchmarkEnvtestStart is envtest's own Start (etcd and kube-apiserver
// processes, both kapi, to ready) and Stop with the kapi assets; no CRDs.
func BenchmarkEnvtestStart(b *testing.B) {
	bin, err := buildKapi()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := installAssets(bin, dir); err != nil {
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

func installAssets(bin, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.Symlink(bin, dir+"/"+name); err != nil {
			return err
		}
	}
	return nil
}
