package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

// A backend is one shared kapi server, started on first use and stopped
// by TestMain after every test ran. Subtests isolate themselves with a
// namespace of their own (newNamespace).
type backend struct {
	name string
	opts []kapitest.Option

	once sync.Once
	srv  *kapitest.Server
	dir  string
	err  error
}

var (
	memoryBackend = &backend{name: "memory", opts: []kapitest.Option{withoutRootCAPublisher}}
	etcdBackend   = &backend{name: "etcd", opts: []kapitest.Option{kapitest.WithEmbeddedEtcd(), withoutRootCAPublisher}}
	allBackends   = []*backend{memoryBackend, etcdBackend}
)

// withoutRootCAPublisher: the suite's tests count and watch every ConfigMap
// of their namespaces, which the root CA publisher would add one to. The
// publisher (and the other controllers) are proven on servers of their own
// in e2e_gc_test.go.
var withoutRootCAPublisher = kapitest.WithFlags("--controllers=*,-root-ca-certificate-publisher-controller")

func (b *backend) start() (*kapitest.Server, error) {
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "kapi-e2e-"+b.name+"-")
		if b.err != nil {
			return
		}
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		b.srv, b.err = kapitest.StartE(b.dir, logger, b.opts...)
	})
	return b.srv, b.err
}

func (b *backend) stop() error {
	if b.srv == nil {
		return nil
	}
	err := b.srv.Stop()
	if rmErr := os.RemoveAll(b.dir); rmErr != nil && err == nil {
		err = rmErr
	}
	return err
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, b := range allBackends {
		if err := b.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop the %s backend: %v\n", b.name, err)
			code = 1
		}
	}
	os.Exit(code)
}

// env is what a subtest gets: the shared server of one backend and a
// client for it.
type env struct {
	backend string
	srv     *kapitest.Server
	cs      kubernetes.Interface
}

// config returns a copy of the admin config without client-side rate
// limiting.
func (e *env) config() *rest.Config {
	cfg := rest.CopyConfig(e.srv.Config)
	cfg.QPS = -1
	return cfg
}

// forEachBackend runs fn as a subtest on the memory backend and on
// embedded etcd.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	for _, b := range allBackends {
		t.Run(b.name, func(t *testing.T) {
			srv, err := b.start()
			if err != nil {
				t.Fatalf("start the %s backend: %v", b.name, err)
			}
			e := &env{backend: b.name, srv: srv}
			e.cs = kubernetes.NewForConfigOrDie(e.config())
			fn(t, e)
		})
	}
}

var nsCounter atomic.Int64

// newNamespace creates a namespace unique to the test and deletes it when
// the test ends.
func (e *env) newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%d-%d", time.Now().UnixNano()%1e6, nsCounter.Add(1))
	_, err := e.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		err := e.cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", name, err)
		}
	})
	return name
}

// rawResponse is one HTTP exchange made without client-go's decoding.
type rawResponse struct {
	code   int
	header http.Header
	body   []byte
}

// raw sends one request with the admin credentials. headers alternate
// names and values.
func (e *env) raw(t *testing.T, method, path string, body []byte, headers ...string) rawResponse {
	t.Helper()
	client, err := rest.HTTPClientFor(e.srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.srv.Config.Host+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return rawResponse{code: resp.StatusCode, header: resp.Header, body: b}
}

// eventually polls cond every 20ms until it returns nil or the deadline
// passes, then fails with its last error.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	testwait.For(t, timeout, 20*time.Millisecond, what, cond)
}

func mustClientset(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return cs
}
