package kubeconfig

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

type whoami struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups"`
	Proto  string   `json:"proto"`
}

// TestWriteAdminEndToEnd writes the admin kubeconfig, loads it the way
// kubectl does, and calls a TLS server that authenticates the client
// certificate: the admin's CN and O must arrive as user and group.
func TestWriteAdminEndToEnd(t *testing.T) {
	dir := t.TempDir()
	b, err := pki.Ensure(pki.Config{Dir: filepath.Join(dir, "pki"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	authn := authenticator.NewX509(b.CAPool)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok, err := authn.AuthenticateRequest(r)
		if err != nil || !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(whoami{Name: info.Name, Groups: info.Groups, Proto: r.Proto})
	}))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{b.Serving},
		ClientAuth:   tls.RequestClientCert,
		MinVersion:   tls.VersionTLS12,
	}
	srv.StartTLS()
	defer srv.Close()

	path := filepath.Join(dir, "nested", "admin.kubeconfig")
	if err := WriteAdmin(path, srv.URL, b.CAPEM, b.AdminCertPEM, b.AdminKeyPEM); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("kubeconfig mode = %v, want 0600", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("kubeconfig directory holds %d entries, want 1 (no temporary file left)", len(entries))
	}

	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != ContextName {
		t.Errorf("current-context = %q, want %q", raw.CurrentContext, ContextName)
	}
	if c := raw.Contexts[ContextName]; c == nil || c.Cluster != ClusterName || c.AuthInfo != UserName {
		t.Errorf("context %q = %+v, want cluster %q user %q", ContextName, c, ClusterName, UserName)
	}
	if a := raw.AuthInfos[UserName]; a == nil || len(a.ClientCertificateData) == 0 || len(a.ClientKeyData) == 0 || a.ClientCertificate != "" {
		t.Errorf("user %q does not embed the client certificate and key", UserName)
	}
	if c := raw.Clusters[ClusterName]; c == nil || c.Server != srv.URL || len(c.CertificateAuthorityData) == 0 {
		t.Errorf("cluster %q = %+v, want server %s with embedded CA", ClusterName, c, srv.URL)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	resp, err := client.Get(cfg.Host + "/whoami")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("got status %d (%s), want 200", resp.StatusCode, body)
	}
	var got whoami
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if want := []string{pki.AdminGroup, user.AllAuthenticated}; got.Name != pki.AdminUser || !slices.Equal(got.Groups, want) {
		t.Errorf("server saw user %q groups %v, want %q %v", got.Name, got.Groups, pki.AdminUser, want)
	}
	if got.Proto != "HTTP/2.0" {
		t.Errorf("protocol = %s, want HTTP/2.0", got.Proto)
	}
}

// TestWriteAdminReplaces checks that a second write replaces the file and
// keeps mode 0600 even when the old file was more open.
func TestWriteAdminReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteAdmin(path, "https://127.0.0.1:6443", []byte("ca"), []byte("cert"), []byte("key")); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Clusters[ClusterName].Server; got != "https://127.0.0.1:6443" {
		t.Errorf("server = %q, want https://127.0.0.1:6443", got)
	}
	if got := string(cfg.AuthInfos[UserName].ClientKeyData); got != "key" {
		t.Errorf("client key = %q, want key", got)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode = %v, want 0600", got)
	}
}

func TestWriteAdminErrors(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, server string
	}{
		{name: "empty path", path: "", server: "https://x"},
		{name: "empty server", path: filepath.Join(dir, "k"), server: ""},
		{name: "parent is a file", path: filepath.Join(blocker, "admin.kubeconfig"), server: "https://x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := WriteAdmin(tc.path, tc.server, nil, nil, nil); err == nil {
				t.Errorf("got no error")
			}
		})
	}
}

// TestAdminRESTConfigAsLoaded: AdminRESTConfig is what a client loading
// the written kubeconfig gets, for kapi's CA and for a serving
// certificate whose CA is unknown (no CA data), on IPv4 and IPv6.
func TestAdminRESTConfigAsLoaded(t *testing.T) {
	dir := t.TempDir()
	b, err := pki.Ensure(pki.Config{Dir: filepath.Join(dir, "pki"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		server string
		ca     []byte
	}{
		{"https://127.0.0.1:6443", b.CAPEM},
		{"https://[::1]:40001", b.CAPEM},
		{"https://localhost:443", nil},
	} {
		path := filepath.Join(dir, "k", string(rune('a'+i)))
		if err := WriteAdmin(path, tc.server, tc.ca, b.AdminCertPEM, b.AdminKeyPEM); err != nil {
			t.Fatal(err)
		}
		want, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AdminRESTConfig(tc.server, tc.ca, b.AdminCertPEM, b.AdminKeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: AdminRESTConfig = %+v, loading the kubeconfig gives %+v", tc.server, got, want)
		}
	}
}
