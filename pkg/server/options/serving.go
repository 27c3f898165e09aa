package options

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// SecureServingOptions configure the TLS listener.
type SecureServingOptions struct {
	BindAddress       string
	BindPort          int
	CertDir           string
	TLSCertFile       string
	TLSPrivateKeyFile string
	ClientCAFile      string
	TLSMinVersion     string
	// TLSCipherSuites are --tls-cipher-suites: names of TLS 1.2 cipher
	// suites as kube-apiserver accepts them (see CipherSuites).
	TLSCipherSuites              []string
	HTTP2MaxStreamsPerConnection int
	DisableHTTP2Serving          bool
	// PermitPortSharing is --permit-port-sharing: SO_REUSEPORT on the
	// listener, as kube-apiserver's.
	PermitPortSharing bool
}

// NewSecureServingOptions returns kapi's defaults. Unlike kube-apiserver
// (0.0.0.0), kapi binds to 127.0.0.1 by default: it is mostly run on a
// developer's machine or in CI, and generates its own credentials.
func NewSecureServingOptions() *SecureServingOptions {
	return &SecureServingOptions{BindAddress: "127.0.0.1", BindPort: 6443, TLSMinVersion: "VersionTLS12"}
}

// AddFlags adds the serving flags to fs.
func (o *SecureServingOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address on which to listen for the --secure-port port.")
	fs.IntVar(&o.BindPort, "secure-port", o.BindPort, "The port on which to serve HTTPS with authentication and authorization. 0 picks a free port; the address chosen is logged.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "The directory where the generated CA, serving and admin client certificates are kept (default <data-dir>/pki). Ignored for serving if --tls-cert-file and --tls-private-key-file are provided.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "File containing the default x509 certificate for HTTPS (CA cert, if any, concatenated after server cert).")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "File containing the default x509 private key matching --tls-cert-file.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.")
	fs.StringVar(&o.TLSMinVersion, "tls-min-version", o.TLSMinVersion, "Minimum TLS version supported. Possible values: VersionTLS12, VersionTLS13.")
	fs.StringSliceVar(&o.TLSCipherSuites, "tls-cipher-suites", o.TLSCipherSuites, "Comma-separated list of cipher suites for the server. If omitted, the ECDHE suites with AES-GCM or ChaCha20-Poly1305 are used (Go's defaults without the CBC suites with SHA-1). TLS 1.3 suites are not configurable.\n"+
		"Preferred values: "+strings.Join(cipherSuiteNames(secureCipherSuites), ", ")+".\n"+
		"Insecure values: "+strings.Join(cipherSuiteNames(insecureCipherSuites), ", ")+".")
	fs.IntVar(&o.HTTP2MaxStreamsPerConnection, "http2-max-streams-per-connection", o.HTTP2MaxStreamsPerConnection, "The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. Zero means to use the default of 100.")
	fs.BoolVar(&o.DisableHTTP2Serving, "disable-http2-serving", o.DisableHTTP2Serving, "If true, HTTP2 serving will be disabled.")
	fs.BoolVar(&o.PermitPortSharing, "permit-port-sharing", o.PermitPortSharing, "If true, SO_REUSEPORT will be used when binding the port, which allows more than one instance to bind on the same address and port. [default=false]")
}

var tlsVersions = map[string]uint16{
	"VersionTLS10": tls.VersionTLS10,
	"VersionTLS11": tls.VersionTLS11,
	"VersionTLS12": tls.VersionTLS12,
	"VersionTLS13": tls.VersionTLS13,
}

// The cipher suite names --tls-cipher-suites accepts, as kube-apiserver's
// (k8s.io/component-base/cli/flag/ciphersuites_flag.go): crypto/tls's
// names of its secure and insecure suites, plus the two legacy ChaCha20
// names without _SHA256.
var secureCipherSuites, insecureCipherSuites = func() (map[string]uint16, map[string]uint16) {
	secure, insecure := map[string]uint16{}, map[string]uint16{}
	for _, c := range tls.CipherSuites() {
		secure[c.Name] = c.ID
	}
	secure["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"] = tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
	secure["TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"] = tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
	for _, c := range tls.InsecureCipherSuites() {
		insecure[c.Name] = c.ID
	}
	return secure, insecure
}()

func cipherSuiteNames(m map[string]uint16) []string {
	return slices.Sorted(maps.Keys(m))
}

// CipherSuites returns the IDs of --tls-cipher-suites (nil when unset:
// the server's defaults), or kube-apiserver's error for an unknown name.
// Insecure suites are accepted, as upstream; InsecureCipherSuites names
// them so the caller can warn.
func (o *SecureServingOptions) CipherSuites() ([]uint16, error) {
	if len(o.TLSCipherSuites) == 0 {
		return nil, nil
	}
	ids := make([]uint16, 0, len(o.TLSCipherSuites))
	for _, name := range o.TLSCipherSuites {
		id, ok := secureCipherSuites[name]
		if !ok {
			id, ok = insecureCipherSuites[name]
		}
		if !ok {
			// kube-apiserver's message, capital letter included.
			return nil, fmt.Errorf("Cipher suite %s not supported or doesn't exist", name)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// InsecureCipherSuites returns the names in --tls-cipher-suites that
// crypto/tls lists as insecure.
func (o *SecureServingOptions) InsecureCipherSuites() []string {
	var out []string
	for _, name := range o.TLSCipherSuites {
		if _, ok := insecureCipherSuites[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

// MinTLSVersion returns the parsed --tls-min-version.
func (o *SecureServingOptions) MinTLSVersion() (uint16, error) {
	if o.TLSMinVersion == "" {
		return tls.VersionTLS12, nil
	}
	v, ok := tlsVersions[o.TLSMinVersion]
	if !ok {
		return 0, fmt.Errorf("unknown tls version %q", o.TLSMinVersion)
	}
	return v, nil
}

// Validate checks the flags; every problem is reported.
func (o *SecureServingOptions) Validate() []error {
	var errs []error
	if o.BindPort < 0 || o.BindPort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %v must be between 0 and 65535, inclusive. 0 picks a free port", o.BindPort))
	}
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not a valid IP address", o.BindAddress))
	}
	if _, err := o.MinTLSVersion(); err != nil {
		errs = append(errs, fmt.Errorf("--tls-min-version: %w", err))
	} else if v, _ := o.MinTLSVersion(); v < tls.VersionTLS12 {
		errs = append(errs, fmt.Errorf("--tls-min-version %s is not allowed: kapi requires at least VersionTLS12", o.TLSMinVersion))
	}
	if _, err := o.CipherSuites(); err != nil {
		errs = append(errs, fmt.Errorf("--tls-cipher-suites: %w", err))
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file must be supplied as a pair"))
	}
	for flag, file := range map[string]string{"--tls-cert-file": o.TLSCertFile, "--tls-private-key-file": o.TLSPrivateKeyFile, "--client-ca-file": o.ClientCAFile} {
		if file == "" {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", flag, file, errors.Unwrap(err)))
		}
	}
	if o.HTTP2MaxStreamsPerConnection < 0 {
		errs = append(errs, errors.New("--http2-max-streams-per-connection can not be negative value"))
	}
	return errs
}
