package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http2"
)

// HTTP server settings of kube-apiserver (serving.md §B).
const (
	maxHeaderBytes        = 1 << 20
	readHeaderTimeout     = 32 * time.Second
	idleTimeout           = 90 * time.Second
	tcpKeepAlivePeriod    = 3 * time.Minute
	http2PerStreamBuffer  = 256 << 10
	defaultHTTP2MaxStream = 100 // lowered from 250 after the HTTP/2 rapid-reset attacks
)

// DefaultCipherSuites are the TLS 1.2 cipher suites served when
// --tls-cipher-suites is not set: ECDHE key exchange with an AEAD cipher
// only. Go's own default list (crypto/tls, Go 1.26) still carries the four
// ECDHE CBC suites with SHA-1 MACs (TLS_ECDHE_{ECDSA,RSA}_WITH_AES_{128,256}_CBC_SHA);
// they are dropped here, as the secure profiles recommended for Kubernetes
// control planes do (and as Go's TLS 1.2 preference list ranks them: after
// every AEAD suite). Clients that only speak CBC can still be served by
// naming those suites in --tls-cipher-suites.
var DefaultCipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// SecureServingInfo is how the head of the chain serves: TLS on one
// listener (bound before Run, lifecycle.md 5).
type SecureServingInfo struct {
	Listener net.Listener
	// Cert is the serving certificate; GetCertificate, if set, wins (SNI,
	// reloading).
	Cert           *tls.Certificate
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// ClientCA, if set, makes the server request (never require) a client
	// certificate; the authenticator verifies it (serving.md 3).
	ClientCA      *x509.CertPool
	MinTLSVersion uint16
	// CipherSuites are the TLS 1.2 suites offered (--tls-cipher-suites);
	// empty means DefaultCipherSuites. TLS 1.3 suites are not
	// configurable.
	CipherSuites []uint16
	// HTTP2MaxStreamsPerConnection <= 0 means 100.
	HTTP2MaxStreamsPerConnection int
	DisableHTTP2                 bool
	// OnTLSHandshakeError is called for each TLS handshake error (may be
	// nil), e.g. to count apiserver_tls_handshake_errors_total.
	OnTLSHandshakeError func()
}

// Listen binds a TCP listener with keep-alive, as the secure serving
// options do before Run. Port 0 picks a free port. reusePort sets
// SO_REUSEPORT on it (--permit-port-sharing): another listener of the same
// user that sets it too may bind the same address and port.
func Listen(ctx context.Context, network, addr string, reusePort bool) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: tcpKeepAlivePeriod}
	if reusePort {
		lc.Control = permitPortReuse
	}
	ln, err := lc.Listen(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("failed to listen on %v: %w", addr, err)
	}
	return ln, nil
}

func (s *SecureServingInfo) tlsConfig() (*tls.Config, error) {
	if s.Cert == nil && s.GetCertificate == nil {
		return nil, errors.New("no serving certificate")
	}
	min := s.MinTLSVersion
	if min == 0 {
		min = tls.VersionTLS12
	}
	suites := s.CipherSuites
	if len(suites) == 0 {
		suites = DefaultCipherSuites
	}
	cfg := &tls.Config{
		MinVersion:   min,
		CipherSuites: slices.Clone(suites),
		NextProtos:   []string{"h2", "http/1.1"},
	}
	if s.DisableHTTP2 {
		cfg.NextProtos = []string{"http/1.1"}
	}
	if s.GetCertificate != nil {
		cfg.GetCertificate = s.GetCertificate
	} else {
		cfg.Certificates = []tls.Certificate{*s.Cert}
	}
	if s.ClientCA != nil {
		cfg.ClientAuth = tls.RequestClientCert
		cfg.ClientCAs = s.ClientCA
	}
	return cfg, nil
}

// Serve starts serving handler on the listener. When stopCh closes,
// http.Server.Shutdown is called, bounded by shutdownTimeout: the listener
// closes at once (listenerStoppedCh), in-flight requests complete, and
// stoppedCh closes when Shutdown returns.
func (s *SecureServingInfo) Serve(handler http.Handler, shutdownTimeout time.Duration, stopCh <-chan struct{}, logger *slog.Logger) (stoppedCh, listenerStoppedCh <-chan struct{}, err error) {
	return s.serve(handler, shutdownTimeout, stopCh, newRunGroup(), logger)
}

// serve is Serve with its goroutines in r: r.abort closes the server at
// once (listener and connections) instead of shutting it down.
func (s *SecureServingInfo) serve(handler http.Handler, shutdownTimeout time.Duration, stopCh <-chan struct{}, r *runGroup, logger *slog.Logger) (stoppedCh, listenerStoppedCh <-chan struct{}, err error) {
	if s.Listener == nil {
		return nil, nil, errors.New("listener must not be nil")
	}
	tlsCfg, err := s.tlsConfig()
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{
		Addr:              s.Listener.Addr().String(),
		Handler:           handler,
		MaxHeaderBytes:    maxHeaderBytes,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		TLSConfig:         tlsCfg,
		ErrorLog:          log.New(&serverErrorLog{logger: logger, onHandshakeError: s.OnTLSHandshakeError}, "", 0),
	}
	if !s.DisableHTTP2 {
		streams := s.HTTP2MaxStreamsPerConnection
		if streams <= 0 {
			streams = defaultHTTP2MaxStream
		}
		h2 := &http2.Server{
			MaxConcurrentStreams:         uint32(streams),
			MaxUploadBufferPerStream:     http2PerStreamBuffer,
			MaxUploadBufferPerConnection: int32(http2PerStreamBuffer * streams),
			MaxReadFrameSize:             http2PerStreamBuffer,
			IdleTimeout:                  idleTimeout,
		}
		if err := http2.ConfigureServer(srv, h2); err != nil {
			return nil, nil, fmt.Errorf("configure http2: %w", err)
		}
		tuneHTTP2Writes(srv, h2)
	}
	return runServer(srv, s.Listener, shutdownTimeout, stopCh, r, logger)
}

func runServer(srv *http.Server, ln net.Listener, shutdownTimeout time.Duration, stopCh <-chan struct{}, r *runGroup, logger *slog.Logger) (<-chan struct{}, <-chan struct{}, error) {
	stopped := make(chan struct{})
	r.goTracked(func() {
		defer close(stopped)
		if !r.await(stopCh) {
			if err := srv.Close(); err != nil {
				logger.Error("Failed to close server", "err", err)
			}
			return
		}
		ctx, cancel := context.WithTimeoutCause(context.Background(), shutdownTimeout, errors.New("shutdown timeout"))
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			logger.Error("Failed to shutdown server", "err", err)
		}
	})

	listenerStopped := make(chan struct{})
	addr := ln.Addr().String()
	tlsLn := tlsListener{ln, srv.TLSConfig}
	r.goTracked(func() {
		defer close(listenerStopped)
		err := srv.Serve(tlsLn)
		msg := fmt.Sprintf("Stopped listening on %s", addr)
		select {
		case <-stopCh:
			logger.Info(msg)
		case <-r.aborted:
			logger.Info(msg)
		default:
			panic(fmt.Sprintf("%s due to error: %v", msg, err))
		}
	})
	logger.Info("Serving securely on " + addr)
	return stopped, listenerStopped, nil
}

// tlsListener wraps accepted connections in TLS (http.Server.ServeTLS
// would require files).
type tlsListener struct {
	net.Listener
	cfg *tls.Config
}

func (l tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return tls.Server(c, l.cfg), nil
}

// serverErrorLog routes http.Server's error log to slog: TLS handshake
// errors are counted and logged at debug level only (serving.md 11).
type serverErrorLog struct {
	logger           *slog.Logger
	onHandshakeError func()
}

func (l *serverErrorLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if strings.Contains(msg, "http: TLS handshake error") {
		if l.onHandshakeError != nil {
			l.onHandshakeError()
		}
		l.logger.Debug(msg)
		return len(p), nil
	}
	l.logger.Error(msg)
	return len(p), nil
}
