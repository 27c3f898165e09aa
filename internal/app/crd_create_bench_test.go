package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkCreateToServedWith1000CRDs measures adding one CRD to a whole
// kapi (memory backend) that already serves 1,000 (two versions each,
// ten per group): from the create request to the first 200 of a list of
// its collection (polled every millisecond), as wall time (ms/served) and
// the process's CPU time (cpu-ms/served: the server, the client and the
// poll). Issue 18, point 5: adding a CRD must cost work in proportion to
// that CRD, not to all of them (goal: create-to-served under 100 ms).
// BenchmarkCreateToServedWith0CRDs is the same on an empty server.
func BenchmarkCreateToServedWith1000CRDs(b *testing.B) { benchmarkCreateToServed(b, 1000) }

func BenchmarkCreateToServedWith0CRDs(b *testing.B) { benchmarkCreateToServed(b, 0) }

func benchmarkCreateToServed(b *testing.B, present int) {
	s, err := kapitest.StartE(b.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.Stop(); err != nil {
			b.Errorf("stop kapi: %v", err)
		}
	})
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS, cfg.Burst = -1, 0
	crds := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	ctx := context.Background()

	// The CRDs already present: created 8 at a time, then all served.
	work := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var createErr error
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if _, err := crds.Create(ctx, restartCRD(i), metav1.CreateOptions{}); err != nil {
					once.Do(func() { createErr = err })
				}
			}
		})
	}
	for i := range present {
		work <- i
	}
	close(work)
	wg.Wait()
	if createErr != nil {
		b.Fatal(createErr)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	served := func(i int, within time.Duration) error {
		crd := restartCRD(i)
		url := fmt.Sprintf("%s/apis/%s/v1/namespaces/default/%s", s.Config.Host, crd.Spec.Group, crd.Spec.Names.Plural)
		deadline := time.Now().Add(within)
		for {
			resp, err := client.Get(url)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: %d after %s", url, resp.StatusCode, within)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := range present {
		if err := served(i, 5*time.Minute); err != nil { // a setup bound, not a figure
			b.Fatal(err)
		}
	}

	next := present
	var wall, cpu time.Duration
	for b.Loop() {
		start, startCPU := time.Now(), cpuTime(b)
		if _, err := crds.Create(ctx, restartCRD(next), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := served(next, time.Minute); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += cpuTime(b) - startCPU
		next++
	}
	b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "ms/served")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/served")
}
