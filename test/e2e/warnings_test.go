package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, text)
}

// A strategy's warnings reach the client as Warning headers: a TLS secret
// whose key does not match its certificate is stored with a warning, as
// kube-apiserver does.
func TestStrategyWarningsReachTheClient(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		rec := &warningRecorder{}
		cfg := e.config()
		cfg.WarningHandler = rec
		cs := kubernetes.NewForConfigOrDie(cfg)
		ns := e.newNamespace(t)
		_, err := cs.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "tls"},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: []byte("not a cert"), corev1.TLSPrivateKeyKey: []byte("not a key")},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.msgs) == 0 || !strings.Contains(strings.Join(rec.msgs, "\n"), "tls:") {
			t.Fatalf("warnings %q, want the TLS key pair warning", rec.msgs)
		}
	})
}

// TestDeprecatedResourceWarnings: every request about v1 Endpoints
// carries upstream's deprecation warning (kube-apiserver v1.37.2's, on a
// list, get, create and delete alike), and requests about EndpointSlices
// carry none.
func TestDeprecatedResourceWarnings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const want = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
		rec := &warningRecorder{}
		cfg := e.config()
		cfg.WarningHandler = rec
		cs := kubernetes.NewForConfigOrDie(cfg)
		ns := e.newNamespace(t)
		ctx := context.Background()
		take := func() []string {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			out := rec.msgs
			rec.msgs = nil
			return out
		}
		eps := cs.CoreV1().Endpoints(ns) //nolint:staticcheck // the deprecated API under test
		steps := []struct {
			name string
			do   func() error
		}{
			{"create", func() error {
				_, err := eps.Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "e"}}, metav1.CreateOptions{}) //nolint:staticcheck // the deprecated API under test
				return err
			}},
			{"get", func() error { _, err := eps.Get(ctx, "e", metav1.GetOptions{}); return err }},
			{"list", func() error { _, err := eps.List(ctx, metav1.ListOptions{}); return err }},
			{"delete", func() error { return eps.Delete(ctx, "e", metav1.DeleteOptions{}) }},
		}
		for _, s := range steps {
			if err := s.do(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if got := take(); len(got) != 1 || got[0] != want {
				t.Errorf("%s: warnings %q, want [%q]", s.name, got, want)
			}
		}
		if _, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := take(); len(got) != 0 {
			t.Errorf("EndpointSlice list: warnings %q, want none", got)
		}
	})
}
