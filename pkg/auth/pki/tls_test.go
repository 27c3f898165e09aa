package pki

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServingHandshake makes real TLS connections with Go's HTTP/2 client,
// verifying the serving certificate against the CA under each name the
// server is reached by.
func TestServingHandshake(t *testing.T) {
	b := ensure(t, Config{Dir: t.TempDir()})
	tests := []struct {
		name    string
		listen  string // address the server listens on
		urlHost string // host the client asks for, and verifies
		wantErr string
	}{
		{name: "localhost", listen: "127.0.0.1:0", urlHost: "localhost"},
		{name: "IPv4 loopback", listen: "127.0.0.1:0", urlHost: "127.0.0.1"},
		{name: "IPv6 loopback", listen: "[::1]:0", urlHost: "[::1]"},
		{name: "name not covered", listen: "127.0.0.1:0", urlHost: "kapi.invalid", wantErr: "certificate is valid for"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", tc.listen)
			if err != nil {
				if strings.HasPrefix(tc.listen, "[::1]") {
					t.Skipf("no IPv6 loopback: %v", err)
				}
				t.Fatal(err)
			}
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, r.Proto)
			}))
			srv.Listener.Close()
			srv.Listener = ln
			srv.EnableHTTP2 = true
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failing case logs a handshake error
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{b.Serving}, MinVersion: tls.VersionTLS12}
			srv.StartTLS()
			defer srv.Close()

			// The URL's host is what the client verifies; the dialer always
			// reaches the listener, so "localhost" is tested even where it
			// resolves to ::1 first.
			addr := ln.Addr().String()
			tr := &http.Transport{
				TLSClientConfig:   &tls.Config{RootCAs: b.CAPool},
				ForceAttemptHTTP2: true,
				DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, network, addr)
				},
			}
			defer tr.CloseIdleConnections()
			_, port, _ := net.SplitHostPort(addr)
			resp, err := (&http.Client{Transport: tr}).Get("https://" + tc.urlHost + ":" + port + "/")
			if tc.wantErr != "" {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("request succeeded, want error containing %q", tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("GET: %v", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.ProtoMajor != 2 || string(body) != "HTTP/2.0" {
				t.Errorf("got protocol %s (server saw %q), want HTTP/2.0", resp.Proto, body)
			}
			chains := resp.TLS.VerifiedChains
			if len(chains) == 0 || !chains[0][len(chains[0])-1].Equal(b.CA) {
				t.Errorf("verified chain does not end at the generated CA")
			}
			if !resp.TLS.PeerCertificates[0].Equal(b.Serving.Leaf) {
				t.Errorf("server presented a different leaf")
			}
		})
	}
}
