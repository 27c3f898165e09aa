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
