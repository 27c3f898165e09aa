package app_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/internal/app"
)

// TestServingCertificateNamesInClusterClientsVerify checks the generated
// serving certificate carries what kube-apiserver's self-signed one does
// for in-cluster clients: the first service IP (the "kubernetes"
// Service's ClusterIP) and the kubernetes.default.svc names, plus the
// fully qualified kubernetes.default.svc.cluster.local.
func TestServingCertificateNamesInClusterClientsVerify(t *testing.T) {
	for _, tc := range []struct {
		name, cidr, firstIP string
	}{
		{"default range", "", "10.0.0.1"},
		{"custom range", "10.96.0.0/12", "10.96.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startKapi(t, nil, func(o *app.Options) {
				if tc.cidr != "" {
					o.Services.ClusterIPRange = tc.cidr
				}
			})
			leaf := readPEMCert(t, filepath.Join(r.opts.SecureServing.CertDir, "apiserver.crt"))
			for _, h := range []string{tc.firstIP, "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost", "127.0.0.1"} {
				if err := leaf.VerifyHostname(h); err != nil {
					t.Errorf("serving certificate does not cover %q: %v", h, err)
				}
			}
			if tc.cidr != "" {
				if err := leaf.VerifyHostname("10.0.0.1"); err == nil {
					t.Errorf("serving certificate covers 10.0.0.1 with --service-cluster-ip-range=%s, want only the range's first IP", tc.cidr)
				}
			}
		})
	}
}

// TestAdminKubeconfigWithOwnServingCertificate starts kapi with
// --tls-cert-file and checks the admin kubeconfig is written and usable:
// startKapi itself reaches /readyz through it, verifying the server with
// the CA the kubeconfig names.
func TestAdminKubeconfigWithOwnServingCertificate(t *testing.T) {
	for _, tc := range []struct {
		name string
		// chained writes the CA after the leaf in --tls-cert-file;
		// otherwise the leaf is self-signed.
		chained bool
		source  string
	}{
		{"CA concatenated after the certificate", true, "chain in --tls-cert-file"},
		{"self-signed certificate", false, "self-signed --tls-cert-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			certFile, keyFile, caPEM := writeOwnServingCert(t, dir, tc.chained)
			logs := &lockedBuffer{}
			r := startKapi(t, nil, func(o *app.Options) {
				o.SecureServing.TLSCertFile = certFile
				o.SecureServing.TLSPrivateKeyFile = keyFile
				o.Logger = slog.New(slog.NewTextHandler(logs, nil))
			})
			if res := do(r.client(false), http.MethodGet, r.base+"/version"); res.code != 200 {
				t.Fatalf("GET /version with the admin kubeconfig: %+v", res)
			}
			kc, err := clientcmd.LoadFromFile(r.opts.AdminKubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			got := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].CertificateAuthorityData
			if !bytes.Equal(got, caPEM) {
				t.Errorf("kubeconfig certificate-authority-data:\n%s\nwant the %s:\n%s", got, tc.source, caPEM)
			}
			line := logs.line("wrote admin kubeconfig")
			for _, want := range []string{r.opts.AdminKubeconfig, tc.source, certFile} {
				if !strings.Contains(line, want) {
					t.Errorf("log line %q does not name %q", line, want)
				}
			}
		})
	}
}

// writeOwnServingCert writes a serving certificate for 127.0.0.1 and its
// key into dir, and returns their paths and the PEM a client must trust:
// a separate CA's (written after the leaf) or the self-signed leaf's.
func writeOwnServingCert(t *testing.T, dir string, chained bool) (string, string, []byte) {
	t.Helper()
	now := time.Now()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "my-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	var certPEM, trustPEM []byte
	if chained {
		caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		caTmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "my-ca"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		}
		caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		ca, _ := x509.ParseCertificate(caDER)
		leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		trustPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
		certPEM = append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), trustPEM...)
	} else {
		leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, leafTmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
		trustPEM = certPEM
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "serving.crt"), filepath.Join(dir, "serving.key")
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, trustPEM
}

func readPEMCert(t *testing.T, file string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatalf("%s holds no PEM block", file)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// line returns the first logged line containing s, or "".
func (b *lockedBuffer) line(s string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
