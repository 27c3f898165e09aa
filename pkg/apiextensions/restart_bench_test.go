package apiextensions

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// seedEstablishedCRDs stores n CRDs in b as a server that served them
// leaves them: names accepted, Established, storage version recorded. The
// CRDs are spread over groups of ten ("g<i/10>.example.com"), each served
// as v1 and v2.
func seedEstablishedCRDs(tb testing.TB, b *memory.Backend, n int) []*apiextensionsv1.CustomResourceDefinition {
	tb.Helper()
	crdREST, status, err := newCRDREST(generic.RESTOptions{Storage: generic.MemoryStorage(b)}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer crdREST.Destroy()
	ctx := systemContext(context.Background(), "")
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, n)
	for i := range n {
		crd := crdtest.NewCRD(fmt.Sprintf("g%d.example.com", i/10), fmt.Sprintf("things%d", i), fmt.Sprintf("Thing%d", i), apiextensionsv1.NamespaceScoped)
		v2 := *crd.Spec.Versions[0].DeepCopy()
		v2.Name, v2.Storage = "v2", false
		crd.Spec.Versions = append(crd.Spec.Versions, v2)
		obj, err := crdREST.Create(ctx, crd, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		crd = obj.(*apiextensionsv1.CustomResourceDefinition)
		acceptNames(crd, nil)
		addStoredVersion(crd)
		obj, _, err = status.Update(ctx, crd.Name, updatedObject{obj: crd}, rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, obj.(*apiextensionsv1.CustomResourceDefinition))
	}
	return out
}

// BenchmarkStartWith300CRDs measures a start of the apiextensions server
// on storage holding 300 established CRDs (two versions each, memory
// backend): from the start to CRDInformerHasNotSynced, when every one is
// served. ms/start is wall time, cpu-ms/start the process's CPU time (on
// a loaded machine the first depends on the others' load, the second
// much less). BenchmarkStartWith0CRDs is the same start without CRDs.
func BenchmarkStartWith300CRDs(b *testing.B) { benchmarkStart(b, 300) }

func BenchmarkStartWith0CRDs(b *testing.B) { benchmarkStart(b, 0) }

func benchmarkStart(b *testing.B, n int) {
	backend := memory.NewBackend(memory.BackendConfig{})
	b.Cleanup(func() { _ = backend.Close() })
	seedEstablishedCRDs(b, backend, n)
	var wall, cpu time.Duration
	for b.Loop() {
		start, startCPU := time.Now(), cpuTime(b)
		ts := startServer(b, serverOptions{backend: backend})
		wall += time.Since(start)
		cpu += cpuTime(b) - startCPU
		b.StopTimer()
		ts.close()
		b.StartTimer()
	}
	b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "ms/start")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/start")
}

// cpuTime is the CPU time (user and system) the process used so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestReadyMeansServedAfterRestart starts a server on storage holding 300
// established CRDs: from the first 200 of /readyz, every version of every
// one of them answers (issue 11, point 5: /readyz answered while CRDs
// answered 404 for over a minute).
func TestReadyMeansServedAfterRestart(t *testing.T) {
	backend := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = backend.Close() })
	crds := seedEstablishedCRDs(t, backend, 300)
	ts := startServer(t, serverOptions{backend: backend, noWait: true})
	client := ts.srv.Client()
	get := func(path string) (int, error) {
		resp, err := client.Get(ts.srv.URL + path)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	deadline := time.Now().Add(waitTimeout)
	for {
		code, err := get("/readyz")
		if err != nil {
			t.Fatal(err)
		}
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not 200 within %v", waitTimeout)
		}
		time.Sleep(time.Millisecond)
	}
	work := make(chan string)
	failures := make(chan string, 2*len(crds))
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for path := range work {
				code, err := get(path)
				switch {
				case err != nil:
					failures <- fmt.Sprintf("GET %s: %v", path, err)
				case code != http.StatusOK:
					failures <- fmt.Sprintf("GET %s: %d right after /readyz answered 200", path, code)
				}
			}
		})
	}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			work <- fmt.Sprintf("/apis/%s/%s/namespaces/ns/%s", crd.Spec.Group, v.Name, crd.Spec.Names.Plural)
		}
	}
	close(work)
	wg.Wait()
	close(failures)
	n := 0
	for f := range failures {
		if n++; n <= 10 {
			t.Error(f)
		}
	}
	if n > 10 {
		t.Errorf("... %d failures in all", n)
	}
}
