package app_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/internal/testports"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

// testEtcd is an etcd the test runs in-process as an "external" etcd: on a
// loopback TCP port, optionally with TLS and client-certificate
// authentication, stoppable and restartable on the same port and data.
type testEtcd struct {
	t    *testing.T
	dir  string
	port int
	tls  *transport.TLSInfo
	e    *embed.Etcd
}

func startTestEtcd(t *testing.T, tlsInfo *transport.TLSInfo) *testEtcd {
	t.Helper()
	te := &testEtcd{t: t, dir: filepath.Join(t.TempDir(), "etcd"), port: testports.Reserve(t), tls: tlsInfo}
	te.start()
	t.Cleanup(te.stop)
	return te
}

func (te *testEtcd) url() string {
	scheme := "http"
	if te.tls != nil {
		scheme = "https"
	}
	return scheme + "://127.0.0.1:" + strconv.Itoa(te.port)
}

func (te *testEtcd) start() {
	te.t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = te.dir
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = true
	// The port is reserved for the test's run (restarts included).
	cfg.SocketOpts.ReusePort = true
	cfg.TickMs, cfg.ElectionMs = 10, 100
	u, err := url.Parse(te.url())
	if err != nil {
		te.t.Fatal(err)
	}
	cfg.ListenClientUrls = []url.URL{*u}
	cfg.AdvertiseClientUrls = []url.URL{*u}
	cfg.ListenPeerUrls = nil // one member: no peer listener needed
	cfg.AdvertisePeerUrls = []url.URL{{Scheme: "unix", Host: "test-no-peer:0"}}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	if te.tls != nil {
		cfg.ClientTLSInfo = *te.tls
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		te.t.Fatalf("start test etcd: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		te.t.Fatal("test etcd not ready after 30s")
	}
	te.e = e
}

func (te *testEtcd) stop() {
	if te.e != nil {
		te.e.Close()
		te.e = nil
	}
}

// etcdPKI generates a CA, an etcd serving certificate for 127.0.0.1 and a
// client certificate signed by it (kapi's own PKI generator does the
// work: its serving and admin certificates are a server and a client
// certificate of one CA).
func etcdPKI(t *testing.T) (server *transport.TLSInfo, caFile, certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := pki.Ensure(pki.Config{Dir: dir, Hosts: []string{"127.0.0.1"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}); err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(dir, pki.CACertFile)
	server = &transport.TLSInfo{
		CertFile:       filepath.Join(dir, pki.ServingCertFile),
		KeyFile:        filepath.Join(dir, pki.ServingKeyFile),
		TrustedCAFile:  caFile,
		ClientCertAuth: true,
	}
	return server, caFile, filepath.Join(dir, pki.AdminCertFile), filepath.Join(dir, pki.AdminKeyFile)
}

func withExternalEtcd(te *testEtcd) testOption {
	return func(o *app.Options) {
		o.Storage.Backend = "etcd3"
		o.Storage.ServerList = []string{te.url()}
	}
}

// createConfigMap POSTs a configmap and returns the status code and body.
func createConfigMap(c *http.Client, base, name, query string) (int, string, error) {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
	resp, err := c.Post(base+"/api/v1/namespaces/default/configmaps"+query, "application/json", bytes.NewBufferString(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestExternalEtcdOverMutualTLS: --etcd-cafile, --etcd-certfile and
// --etcd-keyfile connect kapi to an etcd that requires client
// certificates (issue 12 point 7).
func TestExternalEtcdOverMutualTLS(t *testing.T) {
	serverTLS, caFile, certFile, keyFile := etcdPKI(t)
	te := startTestEtcd(t, serverTLS)

	// The etcd really refuses a client without a certificate.
	caOnly, err := (&transport.TLSInfo{TrustedCAFile: caFile}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	anon, err := clientv3.New(clientv3.Config{Endpoints: []string{te.url()}, TLS: caOnly, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	_, err = anon.Get(ctx, "/x")
	cancel()
	anon.Close()
	if err == nil {
		t.Fatal("the test etcd served a client without a certificate")
	}

	r := startKapi(t, nil, withExternalEtcd(te), func(o *app.Options) {
		o.Storage.CAFile, o.Storage.CertFile, o.Storage.KeyFile = caFile, certFile, keyFile
		o.Storage.Prefix = "/kapi-tls"
	})
	code, body, err := createConfigMap(r.client(false), r.base, "over-tls", "")
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create through mutual TLS: %d %s %v", code, body, err)
	}
	// It is stored in that etcd, under --etcd-prefix.
	tc, err := serverTLSClient(caFile, certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{te.url()}, TLS: tc, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/kapi-tls/configmaps/default/over-tls")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("configmap in etcd: %v, %v", resp, err)
	}
}

func serverTLSClient(caFile, certFile, keyFile string) (*tls.Config, error) {
	return (&transport.TLSInfo{TrustedCAFile: caFile, CertFile: certFile, KeyFile: keyFile}).ClientConfig()
}

// TestEtcdOutageRecovery: while the external etcd is down, readyz reports
// etcd failed; once etcd is back
// (here after 25 s, long enough for gRPC's default reconnect backoff to
// reach 10-20 s between attempts), writes and readyz recover within a
// few seconds (issue 12 point 13).
func TestEtcdOutageRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a 25s etcd outage")
	}
	// Mostly waiting (etcd's reconfiguration checks, outages): run beside
	// the package's other waiting tests.
	t.Parallel()
	te := startTestEtcd(t, nil)
	r := startKapi(t, nil, withExternalEtcd(te))
	c := r.client(false)
	if code, body, err := createConfigMap(c, r.base, "before", ""); err != nil || code != http.StatusCreated {
		t.Fatalf("create before the outage: %d %s %v", code, body, err)
	}

	te.stop()
	down := time.Now()
	// readyz says etcd failed.
	for {
		res := do(c, http.MethodGet, r.base+"/readyz?verbose")
		if res.code == http.StatusInternalServerError && strings.Contains(res.body, "[-]etcd failed") {
			break
		}
		if time.Since(down) > 15*time.Second {
			t.Fatalf("readyz during the outage: %d %s", res.code, res.body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A write during the outage times out as upstream answers it: 504
	// with reason Timeout, not a 500 (issue 12 point 11).
	if code, body, err := createConfigMap(c, r.base, "during", "?timeout=2s"); err != nil || code != http.StatusGatewayTimeout || !strings.Contains(body, `"reason":"Timeout"`) {
		t.Errorf("create during the outage: got %d %s %v, want 504 with reason Timeout", code, body, err)
	}

	time.Sleep(25*time.Second - time.Since(down))
	te.start()
	up := time.Now()
	// The first write after etcd is back. Each attempt has a short
	// timeout of its own, so a slow reconnect shows as failed attempts.
	var recovered time.Duration
	for i := 0; ; i++ {
		code, _, err := createConfigMap(c, r.base, "after-"+strconv.Itoa(i), "?timeout=1s")
		if err == nil && code == http.StatusCreated {
			recovered = time.Since(up)
			break
		}
		if time.Since(up) > 60*time.Second {
			t.Fatalf("no write succeeded 60s after etcd came back (last %d %v)", code, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("first write %s after etcd came back", recovered)
	if recovered > 5*time.Second {
		t.Errorf("first write %s after etcd came back, want within 5s", recovered)
	}
	for {
		res := do(c, http.MethodGet, r.base+"/readyz")
		if res.code == http.StatusOK {
			break
		}
		if time.Since(up) > 10*time.Second {
			t.Fatalf("readyz 10s after etcd came back: %d %s", res.code, res.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
