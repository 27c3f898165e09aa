package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func ensure(t *testing.T, cfg Config) *Bundle {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	b, err := Ensure(cfg)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return b
}

var (
	clusterFiles    = []string{CACertFile, CAKeyFile, ServingCertFile, ServingKeyFile, AdminCertFile, AdminKeyFile}
	frontProxyFiles = []string{FrontProxyCACertFile, FrontProxyCAKeyFile, FrontProxyClientCertFile, FrontProxyClientKeyFile}
	allFiles        = append(slices.Clone(clusterFiles), frontProxyFiles...)
)

// snapshot records the content and modification time of every PKI file.
type fileState struct {
	data  []byte
	mtime time.Time
}

func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	for _, name := range allFiles {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("stat %s: %v", name, err)
		}
		m[name] = fileState{data: data, mtime: fi.ModTime()}
	}
	return m
}

// changed lists the files whose content or mtime differs between a and b.
func changed(a, b map[string]fileState) []string {
	var out []string
	for _, name := range allFiles {
		if !bytes.Equal(a[name].data, b[name].data) || !a[name].mtime.Equal(b[name].mtime) {
			out = append(out, name)
		}
	}
	return out
}

func readCert(t *testing.T, path string) []*x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return certs
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		certs = append(certs, c)
	}
}

func TestEnsureGenerates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "pki")
	b := ensure(t, Config{Dir: dir, Hosts: []string{"0.0.0.0", "10.1.2.3", "Kapi.Example.COM", "[fd00::7]", ""}})

	if got, want := b.Generated, []string{CAKeyFile, CACertFile, ServingKeyFile, ServingCertFile, AdminKeyFile, AdminCertFile,
		FrontProxyCAKeyFile, FrontProxyCACertFile, FrontProxyClientKeyFile, FrontProxyClientCertFile}; !slices.Equal(got, want) {
		t.Errorf("Generated = %v, want %v", got, want)
	}
	modes := map[string]os.FileMode{
		CACertFile: 0o644, ServingCertFile: 0o644, AdminCertFile: 0o644,
		CAKeyFile: 0o600, ServingKeyFile: 0o600, AdminKeyFile: 0o600,
		FrontProxyCACertFile: 0o644, FrontProxyClientCertFile: 0o644,
		FrontProxyCAKeyFile: 0o600, FrontProxyClientKeyFile: 0o600,
	}
	for name, want := range modes {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %v, want %v", name, got, want)
		}
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o755 {
			t.Errorf("mode of %s = %v, want 0755", d, got)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(allFiles) {
		t.Errorf("directory holds %d entries, want %d (no temporary files left)", len(entries), len(allFiles))
	}
	if b.Files.ServingKey != filepath.Join(dir, ServingKeyFile) {
		t.Errorf("Files.ServingKey = %q", b.Files.ServingKey)
	}

	// CA.
	if !b.CA.IsCA || b.CA.MaxPathLen != 0 || !b.CA.MaxPathLenZero {
		t.Errorf("CA: IsCA=%v MaxPathLen=%d, want a CA that signs leaves only", b.CA.IsCA, b.CA.MaxPathLen)
	}
	if got := readCert(t, b.Files.CACert); len(got) != 1 || !got[0].Equal(b.CA) {
		t.Errorf("ca.crt does not hold exactly the bundle's CA")
	}
	if !bytes.Equal(b.CAPEM, mustRead(t, b.Files.CACert)) {
		t.Errorf("CAPEM differs from ca.crt")
	}

	// Serving certificate: file is leaf then CA, EKU serverAuth only.
	chain := readCert(t, b.Files.ServingCert)
	if len(chain) != 2 || !chain[1].Equal(b.CA) || !chain[0].Equal(b.Serving.Leaf) {
		t.Fatalf("apiserver.crt holds %d certificates, want the leaf followed by the CA", len(chain))
	}
	leaf := b.Serving.Leaf
	if got := leaf.ExtKeyUsage; !slices.Equal(got, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("serving EKU = %v, want [serverAuth]", got)
	}
	if len(leaf.SubjectKeyId) != 20 || !bytes.Equal(leaf.AuthorityKeyId, b.CA.SubjectKeyId) {
		t.Errorf("serving SKID = %x, AKID = %x, want a 20-byte SKID and the CA's SKID %x", leaf.SubjectKeyId, leaf.AuthorityKeyId, b.CA.SubjectKeyId)
	}
	if len(b.Serving.Certificate) != 2 {
		t.Errorf("serving tls chain length = %d, want 2", len(b.Serving.Certificate))
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: b.CAPool}); err != nil {
		t.Errorf("serving certificate does not verify against the CA: %v", err)
	}
	hostname, _ := os.Hostname()
	hostname, _ = normalizeHost(hostname)
	for _, h := range []string{"localhost", "127.0.0.1", "::1", hostname, "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "10.1.2.3", "kapi.example.com", "fd00::7"} {
		if h == "" {
			continue
		}
		if err := leaf.VerifyHostname(h); err != nil {
			t.Errorf("serving certificate does not cover %q: %v", h, err)
		}
	}
	for _, h := range []string{"0.0.0.0", "example.org", "10.1.2.4"} {
		if err := leaf.VerifyHostname(h); err == nil {
			t.Errorf("serving certificate covers %q, want not", h)
		}
	}
	for _, ip := range leaf.IPAddresses {
		if ip.IsUnspecified() {
			t.Errorf("serving certificate has unspecified IP SAN %v", ip)
		}
	}

	// Admin certificate.
	admin := readCert(t, b.Files.AdminCert)
	if len(admin) != 1 {
		t.Fatalf("admin.crt holds %d certificates, want 1", len(admin))
	}
	if got := admin[0].Subject.CommonName; got != AdminUser {
		t.Errorf("admin CN = %q, want %q", got, AdminUser)
	}
	if got := admin[0].Subject.Organization; !slices.Equal(got, []string{AdminGroup}) {
		t.Errorf("admin O = %v, want [%s]", got, AdminGroup)
	}
	if _, err := admin[0].Verify(x509.VerifyOptions{Roots: b.CAPool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate does not verify for client auth: %v", err)
	}
	if _, err := admin[0].Verify(x509.VerifyOptions{Roots: b.CAPool}); err == nil {
		t.Errorf("admin certificate verifies for server auth, want client auth only")
	}
	if !bytes.Equal(b.AdminCertPEM, mustRead(t, b.Files.AdminCert)) || !bytes.Equal(b.AdminKeyPEM, mustRead(t, b.Files.AdminKey)) {
		t.Errorf("admin PEM in the bundle differs from the files")
	}
	if block, _ := pem.Decode(b.AdminKeyPEM); block == nil || block.Type != "EC PRIVATE KEY" {
		t.Errorf("admin key is not an EC PRIVATE KEY PEM block")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestEnsureReuses(t *testing.T) {
	dir := t.TempDir()
	first := ensure(t, Config{Dir: dir, Hosts: []string{"10.1.2.3"}})
	before := snapshot(t, dir)

	second := ensure(t, Config{Dir: dir, Hosts: []string{"10.1.2.3"}})
	if got := changed(before, snapshot(t, dir)); len(got) != 0 {
		t.Errorf("files rewritten on reuse: %v", got)
	}
	if len(second.Generated) != 0 {
		t.Errorf("Generated = %v, want none", second.Generated)
	}
	if !second.CA.Equal(first.CA) || !second.Serving.Leaf.Equal(first.Serving.Leaf) {
		t.Errorf("reused bundle holds different certificates")
	}
	if !second.FrontProxyCA.Equal(first.FrontProxyCA) || !second.ProxyClient.Leaf.Equal(first.ProxyClient.Leaf) ||
		!bytes.Equal(second.FrontProxyCAPEM, first.FrontProxyCAPEM) {
		t.Errorf("reused bundle holds different front-proxy certificates")
	}
	if !bytes.Equal(second.AdminCertPEM, first.AdminCertPEM) || !bytes.Equal(second.AdminKeyPEM, first.AdminKeyPEM) {
		t.Errorf("reused bundle holds a different admin pair")
	}
	if len(second.Serving.Certificate) != 2 || !bytes.Equal(second.Serving.Certificate[1], first.CA.Raw) {
		t.Errorf("reused serving chain does not end with the CA")
	}
}

func TestEnsureUnpaired(t *testing.T) {
	for _, name := range allFiles {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ensure(t, Config{Dir: dir})
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			_, err := Ensure(Config{Dir: dir, Logger: quiet})
			if !errors.Is(err, ErrUnpaired) {
				t.Fatalf("got error %v, want ErrUnpaired", err)
			}
			if msg := err.Error(); !strings.HasSuffix(msg, "certificate and key must be supplied as a pair") ||
				!strings.Contains(msg, filepath.Join(dir, name)) {
				t.Errorf("error %q does not name %s and end with the pair message", msg, name)
			}
		})
	}
}

func TestEnsureBrokenFiles(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(t *testing.T, dir string)
		want    string
	}{
		{
			name: "garbage certificate",
			corrupt: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, ServingCertFile), []byte("not a certificate"))
			},
			want: filepath.Join(dir0, ServingCertFile),
		},
		{
			name: "key of another certificate",
			corrupt: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, AdminKeyFile), mustRead(t, filepath.Join(dir, ServingKeyFile)))
			},
			want: "private key does not match public key",
		},
		{
			name: "CA is a leaf",
			corrupt: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, CACertFile), mustRead(t, filepath.Join(dir, AdminCertFile)))
				writeFile(t, filepath.Join(dir, CAKeyFile), mustRead(t, filepath.Join(dir, AdminKeyFile)))
			},
			want: "is not a CA certificate",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ensure(t, Config{Dir: dir})
			tc.corrupt(t, dir)
			want := strings.ReplaceAll(tc.want, dir0, dir)
			_, err := Ensure(Config{Dir: dir, Logger: quiet})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got error %v, want one containing %q", err, want)
			}
		})
	}
}

// dir0 stands for the test's directory in expected messages.
const dir0 = "<dir>"

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureRegenerates(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name   string
		modify func(t *testing.T, dir string)
		cfg    func(base time.Time) Config
		want   []string // files expected to change
	}{
		{
			name: "serving pair missing",
			modify: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, ServingCertFile))
				os.Remove(filepath.Join(dir, ServingKeyFile))
			},
			want: []string{ServingCertFile, ServingKeyFile},
		},
		{
			name: "admin pair missing",
			modify: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, AdminCertFile))
				os.Remove(filepath.Join(dir, AdminKeyFile))
			},
			want: []string{AdminCertFile, AdminKeyFile},
		},
		{
			name: "leaves still valid for 100 days",
			cfg:  func(base time.Time) Config { return Config{Now: fixed(base.Add(265 * day))} },
			want: nil,
		},
		{
			name: "leaves expire within 30 days",
			cfg:  func(base time.Time) Config { return Config{Now: fixed(base.Add(340 * day))} },
			want: leafFiles,
		},
		{
			name: "leaves expired",
			cfg:  func(base time.Time) Config { return Config{Now: fixed(base.Add(400 * day))} },
			want: leafFiles,
		},
		{
			name: "CA expires within 30 days",
			cfg:  func(base time.Time) Config { return Config{Now: fixed(base.Add(caValidity - 10*day))} },
			want: allFiles,
		},
		{
			name: "new host",
			cfg:  func(base time.Time) Config { return Config{Hosts: []string{"10.9.9.9"}} },
			want: []string{ServingCertFile, ServingKeyFile},
		},
		{
			name: "CA replaced",
			modify: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, CACertFile))
				os.Remove(filepath.Join(dir, CAKeyFile))
			},
			want: clusterFiles,
		},
		{
			name: "front-proxy client pair missing",
			modify: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, FrontProxyClientCertFile))
				os.Remove(filepath.Join(dir, FrontProxyClientKeyFile))
			},
			want: []string{FrontProxyClientCertFile, FrontProxyClientKeyFile},
		},
		{
			name: "front-proxy CA replaced",
			modify: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, FrontProxyCACertFile))
				os.Remove(filepath.Join(dir, FrontProxyCAKeyFile))
			},
			want: frontProxyFiles,
		},
		{
			name: "front-proxy client signed by the cluster CA",
			modify: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, FrontProxyClientCertFile), mustRead(t, filepath.Join(dir, AdminCertFile)))
				writeFile(t, filepath.Join(dir, FrontProxyClientKeyFile), mustRead(t, filepath.Join(dir, AdminKeyFile)))
			},
			want: []string{FrontProxyClientCertFile, FrontProxyClientKeyFile},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			base := time.Now()
			ensure(t, Config{Dir: dir, Now: fixed(base)})
			before := snapshot(t, dir)
			if tc.modify != nil {
				tc.modify(t, dir)
			}
			cfg := Config{}
			if tc.cfg != nil {
				cfg = tc.cfg(base)
			}
			cfg.Dir = dir
			b := ensure(t, cfg)
			after := snapshot(t, dir)
			got := changed(before, after)
			if !sameSet(got, tc.want) {
				t.Errorf("changed files = %v, want %v", got, tc.want)
			}
			if !sameSet(b.Generated, tc.want) {
				t.Errorf("Generated = %v, want %v", b.Generated, tc.want)
			}
			now := time.Now()
			if cfg.Now != nil {
				now = cfg.Now()
			}
			roots := map[string]*x509.CertPool{ServingCertFile: b.CAPool, AdminCertFile: b.CAPool, FrontProxyClientCertFile: b.FrontProxyCAPool}
			for name, pool := range roots {
				c := readCert(t, filepath.Join(dir, name))[0]
				if _, err := c.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
					t.Errorf("%s does not verify at %v: %v", name, now, err)
				}
				if left := c.NotAfter.Sub(now); left < RenewBefore {
					t.Errorf("%s expires in %v, want at least %v", name, left, RenewBefore)
				}
			}
			// And once renewed, a second start reuses everything.
			again := ensure(t, cfg)
			if len(again.Generated) != 0 {
				t.Errorf("second start generated %v, want none", again.Generated)
			}
		})
	}
}

// leafFiles are the pairs signed by a CA.
var leafFiles = []string{ServingCertFile, ServingKeyFile, AdminCertFile, AdminKeyFile, FrontProxyClientCertFile, FrontProxyClientKeyFile}

func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestEnsureInMemory(t *testing.T) {
	cwd, _ := os.Getwd()
	before, _ := os.ReadDir(cwd)
	b := ensure(t, Config{})
	after, _ := os.ReadDir(cwd)
	if len(before) != len(after) {
		t.Errorf("in-memory Ensure wrote into the working directory")
	}
	if b.Files != (Files{}) || len(b.Generated) != 0 {
		t.Errorf("Files = %+v, Generated = %v, want none", b.Files, b.Generated)
	}
	if _, err := b.Serving.Leaf.Verify(x509.VerifyOptions{Roots: b.CAPool, DNSName: "localhost"}); err != nil {
		t.Errorf("in-memory serving certificate: %v", err)
	}
	if len(b.AdminCertPEM) == 0 || len(b.AdminKeyPEM) == 0 {
		t.Errorf("in-memory bundle lacks the admin pair")
	}
}

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"localhost", "localhost", true},
		{" Node-1.Example.com. ", "node-1.example.com", true},
		{"[::1]", "::1", true},
		{"0:0:0:0:0:0:0:1", "::1", true},
		{"0.0.0.0", "", true},
		{"::", "", true},
		{"", "", true},
		{"host:6443", "", false},
		{"bad host", "", false},
		{"ünicode", "", false},
		{strings.Repeat("a", 254), "", false},
	}
	for _, tc := range tests {
		got, ok := normalizeHost(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("normalizeHost(%q) = %q, %v, want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestEnsureDeferredWrites: with Config.Defer, Ensure writes nothing (not
// even the directory) and hands over the writes, which produce the files
// a direct Ensure writes; a second Ensure then reuses them.
func TestEnsureDeferredWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	var writes []func() error
	b, err := Ensure(Config{Dir: dir, Logger: quiet, Defer: func(w func() error) { writes = append(writes, w) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Ensure with Defer touched %s: %v", dir, err)
	}
	if len(writes) != 6 || len(b.Generated) != 10 {
		t.Fatalf("%d writes, %d files generated; want the directory and 5 pairs, 10 files", len(writes), len(b.Generated))
	}
	for _, w := range writes {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	again, err := Ensure(Config{Dir: dir, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Generated) != 0 || !bytes.Equal(again.CAPEM, b.CAPEM) || !again.Serving.Leaf.Equal(b.Serving.Leaf) {
		t.Errorf("the deferred files were not reused: generated %v", again.Generated)
	}
	if st, err := os.Stat(filepath.Join(dir, CAKeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %v; want mode 0600", CAKeyFile, st, err)
	}
}
