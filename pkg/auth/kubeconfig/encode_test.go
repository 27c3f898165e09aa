package kubeconfig

import (
	"bytes"
	"crypto/rand"
	"encoding/pem"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func testPEM(t testing.TB, typ string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b})
}

// TestEncodeAdminAsClientcmd: the direct encoding is byte for byte what
// clientcmd.Write makes of the same Config, for the servers kapi writes
// (IPv4, IPv6, host names, any port), and refuses what it does not know
// YAML prints plainly.
func TestEncodeAdminAsClientcmd(t *testing.T) {
	ca, cert, key := testPEM(t, "CERTIFICATE", 400), testPEM(t, "CERTIFICATE", 420), testPEM(t, "EC PRIVATE KEY", 121)
	for _, server := range []string{
		"https://127.0.0.1:6443",
		"https://127.0.0.1:40123",
		"https://[::1]:6443",
		"https://[fd00:10:96::1]:443",
		"https://localhost:6443",
		"https://kapi.example.com",
		"https://my-host.internal:8443",
		"https://10.0.0.1",
	} {
		got, ok := encodeAdmin(server, ca, cert, key)
		if !ok {
			t.Errorf("%s: not encoded directly", server)
			continue
		}
		want, err := clientcmd.Write(*adminConfig(server, ca, cert, key))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: direct encoding differs from clientcmd.Write:\n%s\nwant:\n%s", server, got, want)
		}
	}
	for _, c := range []struct {
		server        string
		ca, cert, key []byte
	}{
		{"http://127.0.0.1:6443", ca, cert, key},
		{"https://", ca, cert, key},
		{"https://127.0.0.1:6443/prefix", ca, cert, key},
		{"https://host name", ca, cert, key},
		{"https://127.0.0.1:6443#x", ca, cert, key},
		{"https://127.0.0.1:6443", nil, cert, key},
		{"https://127.0.0.1:6443", ca, nil, key},
		{"https://127.0.0.1:6443", ca, cert, nil},
	} {
		if _, ok := encodeAdmin(c.server, c.ca, c.cert, c.key); ok {
			t.Errorf("%q (ca %d, cert %d, key %d bytes): encoded directly, want the clientcmd fallback", c.server, len(c.ca), len(c.cert), len(c.key))
		}
	}
}

// TestWriteAdminFallback: a server the direct encoding refuses is written
// by clientcmd and loads back.
func TestWriteAdminFallback(t *testing.T) {
	ca, cert, key := testPEM(t, "CERTIFICATE", 100), testPEM(t, "CERTIFICATE", 100), testPEM(t, "EC PRIVATE KEY", 50)
	path := t.TempDir() + "/admin.kubeconfig"
	server := "https://127.0.0.1:6443/some path"
	if err := WriteAdmin(path, server, ca, cert, key); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Clusters[ClusterName].Server; got != server {
		t.Errorf("server %q, want %q", got, server)
	}
}

// BenchmarkEncodeAdmin compares the direct encoding with clientcmd.Write.
func BenchmarkEncodeAdmin(b *testing.B) {
	ca, cert, key := testPEM(b, "CERTIFICATE", 400), testPEM(b, "CERTIFICATE", 420), testPEM(b, "EC PRIVATE KEY", 121)
	server := "https://127.0.0.1:6443"
	b.Run("clientcmd", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := clientcmd.Write(*adminConfig(server, ca, cert, key)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := encodeAdmin(server, ca, cert, key); !ok {
				b.Fatal("not encoded")
			}
		}
	})
}
