package options

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
)

// RequestHeaderOptions configure front-proxy (request header)
// authentication: a client presenting a certificate signed by
// ClientCAFile (and, if AllowedNames is set, with one of those common
// names) may assert a user in headers.
//
// kube-apiserver's flags default to empty header lists; kapi defaults them
// to the names kubeadm configures (X-Remote-User, X-Remote-Group,
// X-Remote-Extra-, X-Remote-Uid) and, when ClientCAFile is empty, trusts
// the front-proxy CA it generates, so that one kapi can act as the
// aggregated backend of another with nothing to configure but the CA.
type RequestHeaderOptions struct {
	ClientCAFile        string
	AllowedNames        []string
	UsernameHeaders     []string
	UIDHeaders          []string
	GroupHeaders        []string
	ExtraHeaderPrefixes []string
}

// NewRequestHeaderOptions returns kapi's defaults.
func NewRequestHeaderOptions() *RequestHeaderOptions {
	return &RequestHeaderOptions{
		UsernameHeaders:     []string{"X-Remote-User"},
		UIDHeaders:          []string{"X-Remote-Uid"},
		GroupHeaders:        []string{"X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-"},
	}
}

// AddFlags adds the --requestheader-* flags to fs.
func (o *RequestHeaderOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClientCAFile, "requestheader-client-ca-file", o.ClientCAFile, "Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers. Empty means the front-proxy CA kapi generates in --cert-dir. WARNING: generally do not depend on authorization being already done for incoming requests.")
	fs.StringSliceVar(&o.AllowedNames, "requestheader-allowed-names", o.AllowedNames, "List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed (with the generated front-proxy CA: front-proxy-client).")
	fs.StringSliceVar(&o.UsernameHeaders, "requestheader-username-headers", o.UsernameHeaders, "List of request headers to inspect for usernames. The first header with a value wins.")
	fs.StringSliceVar(&o.UIDHeaders, "requestheader-uid-headers", o.UIDHeaders, "List of request headers to inspect for UIDs.")
	fs.StringSliceVar(&o.GroupHeaders, "requestheader-group-headers", o.GroupHeaders, "List of request headers to inspect for groups.")
	fs.StringSliceVar(&o.ExtraHeaderPrefixes, "requestheader-extra-headers-prefix", o.ExtraHeaderPrefixes, "List of request header prefixes to inspect for extra user information.")
}

// Validate checks the flags.
func (o *RequestHeaderOptions) Validate() []error {
	var errs []error
	if o.ClientCAFile != "" {
		if _, err := os.Stat(o.ClientCAFile); err != nil {
			errs = append(errs, fmt.Errorf("--requestheader-client-ca-file %q: %w", o.ClientCAFile, errors.Unwrap(err)))
		}
	}
	if len(o.UsernameHeaders) == 0 {
		errs = append(errs, errors.New("--requestheader-username-headers must not be empty"))
	}
	return errs
}

// AggregatorOptions configure how the aggregator reaches aggregated API
// servers.
type AggregatorOptions struct {
	// ProxyClientCertFile and ProxyClientKeyFile are the client
	// certificate the aggregator presents to backends; empty means the
	// front-proxy-client certificate kapi generates in --cert-dir.
	ProxyClientCertFile string
	ProxyClientKeyFile  string
	// EnableAggregatorRouting is accepted for compatibility. kapi always
	// routes to an endpoint of the Service (what kube-apiserver does with
	// --enable-aggregator-routing=true): without kube-proxy a Service's
	// cluster IP leads nowhere.
	EnableAggregatorRouting bool
}

// NewAggregatorOptions returns the defaults.
func NewAggregatorOptions() *AggregatorOptions { return &AggregatorOptions{} }

// AddFlags adds the aggregator flags to fs.
func (o *AggregatorOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ProxyClientCertFile, "proxy-client-cert-file", o.ProxyClientCertFile, "Client certificate used to prove the identity of the aggregator when it must call out during a request: proxying requests to a user api-server and calling out to webhook admission plugins. Empty means the generated front-proxy client certificate.")
	fs.StringVar(&o.ProxyClientKeyFile, "proxy-client-key-file", o.ProxyClientKeyFile, "Private key for the --proxy-client-cert-file client certificate.")
	fs.BoolVar(&o.EnableAggregatorRouting, "enable-aggregator-routing", o.EnableAggregatorRouting, "Accepted for compatibility: kapi always routes aggregator requests to endpoint IPs rather than the cluster IP.")
}

// Validate checks the flags.
func (o *AggregatorOptions) Validate() []error {
	var errs []error
	if (o.ProxyClientCertFile == "") != (o.ProxyClientKeyFile == "") {
		errs = append(errs, errors.New("--proxy-client-cert-file and --proxy-client-key-file must be supplied as a pair"))
	}
	for flag, file := range map[string]string{"--proxy-client-cert-file": o.ProxyClientCertFile, "--proxy-client-key-file": o.ProxyClientKeyFile} {
		if file == "" {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", flag, file, errors.Unwrap(err)))
		}
	}
	return errs
}
