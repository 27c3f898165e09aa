package requestheader

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

// Config configures request-header authentication, flag for flag as
// kube-apiserver's --requestheader-* options.
type Config struct {
	// ClientCA verifies the proxy's client certificate
	// (--requestheader-client-ca-file). Required. Keep it separate from
	// the CA of ordinary client certificates: anyone holding a certificate
	// it signed can claim to be any user.
	ClientCA *x509.CertPool
	// AllowedNames are the common names a proxy certificate may have
	// (--requestheader-allowed-names); empty allows any certificate that
	// ClientCA verifies.
	AllowedNames []string
	// UsernameHeaders are checked in order; the first with a non-empty
	// value names the user (--requestheader-username-headers). Required.
	UsernameHeaders []string
	// UIDHeaders are checked in order; the first with a non-empty value is
	// the user's UID (--requestheader-uid-headers). If set, it must
	// include X-Remote-Uid, as upstream requires.
	UIDHeaders []string
	// GroupHeaders give the groups: every non-empty value of every one of
	// them, in order (--requestheader-group-headers).
	GroupHeaders []string
	// ExtraHeaderPrefixes give the extra fields: for each header whose
	// name starts with a prefix, the rest of the name, lower-cased and
	// %-decoded, is the key and its values are appended
	// (--requestheader-extra-headers-prefix).
	ExtraHeaderPrefixes []string
}

// DefaultConfig is the configuration kapi uses when it generates its own
// PKI: trust pool (the generated front-proxy CA, [pki.Bundle]'s
// FrontProxyCAPool) for proxies named front-proxy-client, with the headers
// kubeadm configures for kube-apiserver: X-Remote-User, X-Remote-Uid,
// X-Remote-Group and X-Remote-Extra-. (kube-apiserver's own flag defaults
// are all empty, which disables request-header authentication; the UID
// header is the one upstream suggests for --requestheader-uid-headers.)
func DefaultConfig(pool *x509.CertPool) Config {
	return Config{
		ClientCA:            pool,
		AllowedNames:        []string{pki.FrontProxyClientName},
		UsernameHeaders:     []string{UsernameHeader},
		UIDHeaders:          []string{UIDHeader},
		GroupHeaders:        []string{GroupHeader},
		ExtraHeaderPrefixes: []string{ExtraHeaderPrefix},
	}
}

// Validate reports every problem with c, joined: a missing ClientCA or
// username header, a header name that is empty or only spaces (as
// upstream's "empty header" check), and UID headers that leave out
// X-Remote-Uid (upstream refuses those, since aggregation would silently
// lose the UID).
func (c Config) Validate() error {
	var errs []error
	if c.ClientCA == nil {
		errs = append(errs, errors.New("requestheader: a client CA is required"))
	}
	if len(c.UsernameHeaders) == 0 {
		errs = append(errs, errors.New("requestheader: at least one username header is required"))
	}
	lists := []struct {
		flag  string
		names []string
	}{
		{"requestheader-username-headers", c.UsernameHeaders},
		{"requestheader-uid-headers", c.UIDHeaders},
		{"requestheader-group-headers", c.GroupHeaders},
		{"requestheader-extra-headers-prefix", c.ExtraHeaderPrefixes},
	}
	for _, l := range lists {
		for _, n := range l.names {
			if strings.TrimSpace(n) == "" {
				errs = append(errs, fmt.Errorf("requestheader: empty header %q in %s", n, l.flag))
			}
		}
	}
	if len(c.UIDHeaders) > 0 && !containsFold(c.UIDHeaders, UIDHeader) {
		errs = append(errs, fmt.Errorf("requestheader: --requestheader-uid-headers is set without specifying the standard %s header - API aggregation will not work", UIDHeader))
	}
	return errors.Join(errs...)
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(strings.TrimSpace(v), s) {
			return true
		}
	}
	return false
}

// trimmed returns the names with surrounding spaces removed, as upstream
// trims flag values.
func trimmed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.TrimSpace(n)
	}
	return out
}
