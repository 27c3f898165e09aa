package app

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestNewCommandFor(t *testing.T) {
	for argv0, want := range map[string]string{
		"/usr/local/kubebuilder/bin/kube-apiserver": "kube-apiserver",
		"etcd":               "etcd",
		"./bin/kapi":         "kapi",
		"kube-apiserver.exe": "kube-apiserver",
	} {
		if got := NewCommandFor(argv0).Name(); got != want {
			t.Errorf("NewCommandFor(%q) = %s, want %s", argv0, got, want)
		}
	}
	root := NewCommand()
	for _, sub := range []string{"kube-apiserver", "etcd", "install-envtest-assets"} {
		if c, _, err := root.Find([]string{sub}); err != nil || c.Name() != sub {
			t.Errorf("kapi %s: %v", sub, err)
		}
	}
}

// envtestAPIServerArgs are the arguments controller-runtime v0.25's envtest
// passes to kube-apiserver (pkg/internal/testing/controlplane/apiserver.go,
// defaultArgs, plus --client-ca-file from auth.go and the deprecated
// APIServerDefaultArgs' --advertise-address).
func envtestAPIServerArgs(dir string) []string {
	return []string{
		"--advertise-address=127.0.0.1",
		"--allow-privileged=true",
		"--authorization-mode=RBAC",
		"--bind-address=127.0.0.1",
		"--cert-dir=" + dir,
		"--client-ca-file=" + filepath.Join(dir, "client-cert-auth-ca.crt"),
		"--disable-admission-plugins=ServiceAccount",
		"--etcd-servers=http://127.0.0.1:2379",
		"--secure-port=36443",
		"--service-account-issuer=https://127.0.0.1:36443/",
		"--service-account-key-file=" + filepath.Join(dir, "sa-signer.crt"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa-signer.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
	}
}

// Every flag envtest passes parses; kapi's own flags take the values;
// --cert-dir has kube-apiserver's meaning.
func TestKubeAPIServerFlags(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"apiserver.crt", "apiserver.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := NewKubeAPIServerCommand()
	if err := cmd.ParseFlags(envtestAPIServerArgs(dir)); err != nil {
		t.Fatalf("envtest's flags: %v", err)
	}
	fs := cmd.Flags()
	if v, _ := fs.GetString("cert-dir"); v != dir {
		t.Errorf("--cert-dir = %q", v)
	}
	var buf bytes.Buffer
	// The options are reached through the flag set's bound values.
	o := NewOptions()
	o.SecureServing.CertDir = dir
	if err := o.applyKubeAPIServerCertDir(false, slog.New(slog.NewTextHandler(&buf, nil))); err != nil {
		t.Fatal(err)
	}
	if o.DataDir != filepath.Join(dir, "kapi") || o.SecureServing.CertDir != filepath.Join(dir, "kapi", "pki") {
		t.Errorf("data dir %q, kapi cert dir %q; want <cert-dir>/kapi and <cert-dir>/kapi/pki", o.DataDir, o.SecureServing.CertDir)
	}
	if o.SecureServing.TLSCertFile != filepath.Join(dir, "apiserver.crt") || o.SecureServing.TLSPrivateKeyFile != filepath.Join(dir, "apiserver.key") {
		t.Errorf("serving pair %q %q, want apiserver.crt and apiserver.key of --cert-dir", o.SecureServing.TLSCertFile, o.SecureServing.TLSPrivateKeyFile)
	}
	// Without the pair in --cert-dir, kapi generates its own.
	o = NewOptions()
	o.SecureServing.CertDir = t.TempDir()
	if err := o.applyKubeAPIServerCertDir(false, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if o.SecureServing.TLSCertFile != "" {
		t.Errorf("serving file %q without a pair in --cert-dir", o.SecureServing.TLSCertFile)
	}

	// kube-apiserver v1.37.2 has no --identity-lease-* flags: it answers
	// "unknown flag" (its lease timings are package variables).
	for _, bad := range [][]string{{"--no-such-flag=1"}, {"--allow-privileged=maybe"}, {"positional"},
		{"--identity-lease-duration-seconds=5"}, {"--identity-lease-renewal-interval-seconds=1"}} {
		c := NewKubeAPIServerCommand()
		c.SetArgs(bad)
		c.SetOut(&buf)
		c.SetErr(&buf)
		if err := c.Execute(); err == nil {
			t.Errorf("kube-apiserver %v: no error", bad)
		}
	}
	help := NewKubeAPIServerCommand()
	var out bytes.Buffer
	help.SetOut(&out)
	help.SetArgs([]string{"--help"})
	if err := help.Execute(); err != nil {
		t.Fatal(err)
	}
	// envtest looks for --insecure-port in --help (process.CheckFlag) and
	// passes it only if present; kube-apiserver >= 1.24 has none.
	if strings.Contains(out.String(), "--insecure-port") || !strings.Contains(out.String(), "--etcd-servers") {
		t.Errorf("kube-apiserver --help lists --insecure-port or lacks --etcd-servers:\n%s", out.String())
	}
}

func TestEtcdFlags(t *testing.T) {
	cmd := NewEtcdCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "      --unsafe-no-fsync") {
		t.Errorf("etcd --help lacks --unsafe-no-fsync (envtest checks for it):\n%s", out.String())
	}
	e := &etcdOptions{}
	fs := pflag.NewFlagSet("etcd", pflag.ContinueOnError)
	e.addFlags(fs)
	dir := t.TempDir()
	if err := fs.Parse([]string{
		"--data-dir=" + dir, "--listen-client-urls=http://127.0.0.1:12379", "--advertise-client-urls=http://127.0.0.1:12379",
		"--listen-peer-urls=http://127.0.0.1:12380", "--unsafe-no-fsync=true",
	}); err != nil {
		t.Fatal(err)
	}
	ec, err := e.config()
	if err != nil {
		t.Fatal(err)
	}
	if ec.Dir != dir || !ec.UnsafeNoFsync || ec.ListenClientUrls[0].Host != "127.0.0.1:12379" || ec.ListenPeerUrls[0].Host != "127.0.0.1:12380" {
		t.Errorf("etcd config: dir %s fsync-off %v client %v peer %v", ec.Dir, ec.UnsafeNoFsync, ec.ListenClientUrls, ec.ListenPeerUrls)
	}
	e.listenClientURLs = []string{"not a url"}
	if _, err := e.config(); err == nil || !strings.Contains(err.Error(), "--listen-client-urls") {
		t.Errorf("a bad URL: got %v, want an error naming the flag", err)
	}
}

func TestInstallEnvtestAssets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "assets")
	bin := filepath.Join(t.TempDir(), "kapi")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second run replaces the links
		if err := InstallEnvtestAssets(dir, bin, "/usr/bin/kubectl"); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"kube-apiserver": bin, "etcd": bin, "kubectl": "/usr/bin/kubectl"} {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != want {
			t.Errorf("%s -> %q (%v), want %s", name, got, err, want)
		}
	}
}
