package server

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/http2"
)

// The HTTP/2 settings the server advertises are kube-apiserver's
// (serving.md 10): 100 streams, 256 KiB per-stream window and frame size.
func TestHTTP2SettingsAndTLSMinimum(t *testing.T) {
	for _, tc := range []struct {
		name    string
		streams int
		want    uint32
	}{{"default", 0, 100}, {"flag", 250, 250}} {
		t.Run(tc.name, func(t *testing.T) {
			serving, client, base := tlsServing(t)
			serving.HTTP2MaxStreamsPerConnection = tc.streams
			stop := make(chan struct{})
			stopped, listenerStopped, err := serving.Serve(text("ok"), 0, stop, testLogger())
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				close(stop)
				<-stopped
				<-listenerStopped
			}()
			tr := client.Transport.(*http.Transport)
			cfg := tr.TLSClientConfig.Clone()
			cfg.NextProtos = []string{"h2"}
			conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
				t.Fatalf("ALPN %q, want h2", p)
			}
			if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
				t.Fatal(err)
			}
			fr := http2.NewFramer(conn, conn)
			if err := fr.WriteSettings(); err != nil {
				t.Fatal(err)
			}
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatal(err)
			}
			sf, ok := f.(*http2.SettingsFrame)
			if !ok {
				t.Fatalf("first frame %T, want SETTINGS", f)
			}
			want := map[http2.SettingID]uint32{
				http2.SettingMaxConcurrentStreams: tc.want,
				http2.SettingInitialWindowSize:    256 << 10,
				http2.SettingMaxFrameSize:         256 << 10,
				http2.SettingMaxHeaderListSize:    1<<20 + 32*10, // MaxHeaderBytes plus net/http's slack
			}
			for id, v := range want {
				got, ok := sf.Value(id)
				if id == http2.SettingMaxHeaderListSize {
					// net/http adds its own allowance; just require >= 1 MiB.
					if !ok || got < 1<<20 {
						t.Errorf("%v = %d, want at least 1 MiB", id, got)
					}
					continue
				}
				if !ok || got != v {
					t.Errorf("%v = %d (present %v), want %d", id, got, ok, v)
				}
			}

			old := tr.TLSClientConfig.Clone()
			old.MaxVersion = tls.VersionTLS11
			old.MinVersion = tls.VersionTLS10
			if c, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), old); err == nil {
				c.Close()
				t.Fatal("a TLS 1.1 handshake succeeded, want TLS 1.2 minimum")
			}
		})
	}
}

func testLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Without --tls-cipher-suites a TLS 1.2 client that offers only the CBC
// suites with SHA-1 is refused; the AEAD suites are served. Naming a CBC
// suite serves it (and only the suites named).
func TestCipherSuites(t *testing.T) {
	cbc := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA}
	gcm := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
	// HTTP/2 requires an AES-128-GCM suite among the configured ones
	// (http2.ConfigureServer refuses to start otherwise, as upstream).
	cbcAndGCM := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
	for _, tc := range []struct {
		name       string
		configured []uint16
		offered    []uint16
		wantOK     bool
	}{
		{"default refuses CBC SHA-1", nil, cbc, false},
		{"default serves AES-GCM", nil, gcm, true},
		{"default serves ChaCha20", nil, []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}, true},
		{"configured CBC is served", cbcAndGCM, cbc[:1], true},
		{"only the configured suites", cbcAndGCM, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serving, client, base := tlsServing(t)
			serving.CipherSuites = tc.configured
			stop := make(chan struct{})
			stopped, listenerStopped, err := serving.Serve(text("ok"), 0, stop, testLogger())
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				close(stop)
				<-stopped
				<-listenerStopped
			}()
			cfg := client.Transport.(*http.Transport).TLSClientConfig.Clone()
			cfg.MaxVersion = tls.VersionTLS12
			cfg.CipherSuites = tc.offered
			conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), cfg)
			if err == nil {
				got := conn.ConnectionState().CipherSuite
				conn.Close()
				if !tc.wantOK {
					t.Fatalf("handshake succeeded with %s, want it refused", tls.CipherSuiteName(got))
				}
				if !slices.Contains(tc.offered, got) {
					t.Fatalf("negotiated %s, not offered", tls.CipherSuiteName(got))
				}
				return
			}
			if tc.wantOK {
				t.Fatalf("handshake: %v, want success", err)
			}
		})
	}
	serving, _, _ := tlsServing(t)
	t.Cleanup(func() { _ = serving.Listener.Close() })
	serving.CipherSuites = cbc
	if _, _, err := serving.Serve(text("ok"), 0, make(chan struct{}), testLogger()); err == nil || !strings.Contains(err.Error(), "HTTP/2-required") {
		t.Errorf("CBC-only suites with HTTP/2: got %v, want the HTTP/2-required error", err)
	}
	for _, id := range DefaultCipherSuites {
		s := tls.CipherSuiteName(id)
		if strings.Contains(s, "CBC") || strings.HasPrefix(s, "TLS_RSA_") {
			t.Errorf("default suite %s: want ECDHE AEAD suites only", s)
		}
	}
}
