package kapitest_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/internal/testx509"
	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
)

// Options and flags are set through kapitest's own types (this package is
// outside kapitest, as a user's test is): fields first, then Flags, which
// the command's flag set parses and which win.
func TestOptionsAndFlags(t *testing.T) {
	srv := kapitest.Start(t,
		kapitest.WithOptions(func(o *kapitest.Options) {
			o.HSTSDirectives = []string{"max-age=1"}
		}),
		kapitest.WithFlags(`--cors-allowed-origins=^https://ui\.example\.com$`, "--strict-transport-security-directives=max-age=31536000"),
	)
	if srv.Options.StorageBackend != "memory" || len(srv.Options.Flags) != 2 {
		t.Errorf("got options %+v, want the memory backend and two flags", srv.Options)
	}
	client, err := rest.HTTPClientFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.Config.Host+"/api/v1/namespaces", nil)
	req.Header.Set("Origin", "https://ui.example.com")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "https://ui.example.com" {
		t.Errorf("got Access-Control-Allow-Origin %q, want the origin (--cors-allowed-origins)", got)
	}
	if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
		t.Errorf("got Strict-Transport-Security %q, want the flag's max-age=31536000", got)
	}
	// Stop is idempotent: the cleanup stops it again.
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestBadFlag(t *testing.T) {
	_, err := kapitest.StartE(t.TempDir(), slog.New(slog.DiscardHandler), kapitest.WithFlags("--no-such-flag=1"))
	if err == nil || !strings.Contains(err.Error(), "unknown flag: --no-such-flag") {
		t.Fatalf("got %v, want unknown flag: --no-such-flag", err)
	}
}

// The data dir's files are written while the server starts
// (app.Options.DeferFileWrites), and Start returns once they are: the
// PKI and the service-account key in <DataDir>/pki, the admin kubeconfig
// that Config was loaded from.
func TestStartReturnsWithItsFilesWritten(t *testing.T) {
	srv := kapitest.Start(t)
	dir := filepath.Join(srv.DataDir(), "pki")
	for _, name := range []string{
		pki.CACertFile, pki.CAKeyFile, pki.ServingCertFile, pki.ServingKeyFile, pki.AdminCertFile, pki.AdminKeyFile,
		pki.FrontProxyCACertFile, pki.FrontProxyCAKeyFile, pki.FrontProxyClientCertFile, pki.FrontProxyClientKeyFile,
		serviceaccount.GeneratedKeyFile, serviceaccount.GeneratedPublicKeyFile,
	} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	ca, err := os.ReadFile(filepath.Join(dir, pki.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ca, srv.Config.CAData) {
		t.Errorf("the kubeconfig's CA is not %s", pki.CACertFile)
	}
}

// A write that fails while the server starts fails Start, with the
// error NewConfig gives when it writes the file itself.
func TestStartReportsAFailedFileWrite(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := kapitest.StartE(filepath.Join(dir, "data"), slog.New(slog.DiscardHandler),
		kapitest.WithFlags("--admin-kubeconfig="+filepath.Join(notDir, "admin.kubeconfig")))
	if err == nil || !strings.HasPrefix(err.Error(), "write --admin-kubeconfig: ") {
		t.Fatalf("got %v, want the admin kubeconfig's write error", err)
	}
}

// TestStartConfigAsKubeconfig: Server.Config is what loading the admin
// kubeconfig gives (Start makes it without reading the file back), with
// envtest's client-side rate limits; with kapi's PKI and with a serving
// certificate of the user's whose issuer is unknown (no CA in the
// kubeconfig).
func TestStartConfigAsKubeconfig(t *testing.T) {
	dir := t.TempDir()
	cert := testx509.SelfSigned(t, "user-serving", testx509.ECDSA, 0, testx509.SAN("localhost", net.ParseIP("127.0.0.1")))
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "serving.crt"), filepath.Join(dir, "serving.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]kapitest.Option{nil, {kapitest.WithFlags("--tls-cert-file="+certFile, "--tls-private-key-file="+keyFile)}} {
		srv := kapitest.Start(t, opts...)
		want, err := clientcmd.BuildConfigFromFlags("", srv.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		want.QPS, want.Burst = 1000, 2000
		if !reflect.DeepEqual(srv.Config, want) {
			t.Errorf("Server.Config = %+v, loading %s gives %+v", srv.Config, srv.Kubeconfig, want)
		}
	}
}

// TestStartWithoutDefaultControllers: with the service-account and root-CA
// controllers turned off (the e2e suite's shared servers turn off the
// latter), Start returns a server without the defaults those controllers
// make (TestSettledWithoutDefaultControllers checks that Start does not
// wait for them).
func TestStartWithoutDefaultControllers(t *testing.T) {
	for _, flag := range []string{
		"--controllers=*,-root-ca-certificate-publisher-controller",
		"--controllers=*,-serviceaccount-controller,-root-ca-cert-publisher",
	} {
		srv := kapitest.Start(t, kapitest.WithFlags(flag))
		client, err := kubernetes.NewForConfig(srv.Config)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.CoreV1().ConfigMaps("default").Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: kube-root-ca.crt in default: %v, want NotFound (its controller is off)", flag, err)
		}
	}
}
