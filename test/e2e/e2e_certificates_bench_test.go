package e2e

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// BenchmarkCSRList measures listing 10,000 CertificateSigningRequests
// (pending; each created with a real signed PKCS#10 request, not timed),
// as objects (JSON, what client-go and informers read) and as a Table
// (what kubectl get csr reads), on memory and on embedded etcd.
//
//	go test -run '^$' -bench BenchmarkCSRList -benchtime 10x ./test/e2e/
func BenchmarkCSRList(b *testing.B) {
	const n = 10000
	for _, backend := range []struct {
		name string
		opts []kapitest.Option
	}{{"memory", nil}, {"etcd", []kapitest.Option{kapitest.WithEmbeddedEtcd()}}} {
		b.Run(backend.name, func(b *testing.B) {
			dir := b.TempDir()
			srv, err := kapitest.StartE(dir, slog.New(slog.NewTextHandler(io.Discard, nil)), backend.opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := srv.Stop(); err != nil {
					b.Error(err)
				}
				_ = os.RemoveAll(dir)
			}()
			cfg := *srv.Config
			cfg.QPS = -1
			cs := kubernetes.NewForConfigOrDie(&cfg)
			_, req := newCSRPEM(b, pkix.Name{CommonName: "bench"})
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for w := range 16 {
				wg.Go(func() {
					for i := w; i < n; i += 16 {
						csr := &certificatesv1.CertificateSigningRequest{
							ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%05d", i)},
							Spec:       certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: "example.com/bench", Usages: []certificatesv1.KeyUsage{"client auth"}},
						}
						if _, err := cs.CertificatesV1().CertificateSigningRequests().Create(context.Background(), csr, metav1.CreateOptions{}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.Run("objects", func(b *testing.B) {
				for range b.N {
					l, err := cs.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
					if err != nil || len(l.Items) != n {
						b.Fatalf("list: %v (%d items)", err, len(l.Items))
					}
				}
			})
			b.Run("table", func(b *testing.B) {
				for range b.N {
					res := cs.CertificatesV1().RESTClient().Get().Resource("certificatesigningrequests").
						SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(context.Background())
					raw, err := res.Raw()
					if err != nil || len(raw) < n*100 {
						b.Fatalf("table list: %v (%d bytes)", err, len(raw))
					}
				}
			})
		})
	}
}
