package requestheader

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// New returns an authenticator that trusts user headers from proxies whose
// TLS client certificate cfg.ClientCA verifies for client authentication
// (further certificates the client sent serve as intermediates) and, if
// cfg.AllowedNames is set, whose common name is listed. The outcome, as
// upstream's requestheader authenticator:
//
//   - no client certificate: no opinion (nil, false, nil);
//   - a certificate that does not verify, or a common name not allowed:
//     an error, and the headers are not read. In a [authenticator.Union]
//     the next authenticators still run, and one that succeeds wins (so
//     an ordinary client certificate from the cluster CA still works);
//   - a trusted proxy but no non-empty username header: no opinion;
//   - otherwise the user the headers name, in system:authenticated
//     (unless it is system:anonymous or already says it is
//     authenticated or unauthenticated), and every username, UID, group
//     and extra header this config reads is removed from r.Header, so it
//     reaches neither handlers nor further proxies. This is the one
//     change to the request, as upstream makes.
//
// cfg must pass [Config.Validate].
func New(cfg Config) (authenticator.Request, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &requestHeader{
		verifier: authenticator.NewClientCertVerifier(cfg.ClientCA),
		allowed:  slices.Clone(cfg.AllowedNames),
		names:    trimmed(cfg.UsernameHeaders),
		uids:     trimmed(cfg.UIDHeaders),
		groups:   trimmed(cfg.GroupHeaders),
		prefixes: trimmed(cfg.ExtraHeaderPrefixes),
		now:      time.Now,
	}, nil
}

type requestHeader struct {
	verifier                      *authenticator.ClientCertVerifier
	allowed                       []string
	names, uids, groups, prefixes []string
	now                           func() time.Time
	lastVerifyErr                 atomic.Pointer[wrappedVerifyError]
}

var _ authenticator.Request = (*requestHeader)(nil)

func (a *requestHeader) AuthenticateRequest(r *http.Request) (*user.Info, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	if err := a.verify(r.TLS.PeerCertificates); err != nil {
		return nil, false, err
	}
	h := r.Header
	name := firstValue(h, a.names)
	if name == "" {
		return nil, false, nil
	}
	u := &user.Info{
		Name:   name,
		UID:    firstValue(h, a.uids),
		Groups: allValues(h, a.groups),
		Extra:  extra(h, a.prefixes),
	}
	a.clear(h)
	return authenticated(u), true, nil
}

// verify checks the proxy's certificate chain and common name.
func (a *requestHeader) verify(peers []*x509.Certificate) error {
	leaf, err := a.verifier.Verify(peers, a.now())
	if err != nil {
		return a.wrapVerifyError(err)
	}
	if len(a.allowed) > 0 && !slices.Contains(a.allowed, leaf.Subject.CommonName) {
		return fmt.Errorf("requestheader: x509: subject with cn=%s is not in the allowed list", leaf.Subject.CommonName)
	}
	return nil
}

// clear removes the headers a proxy used to name the user.
func (a *requestHeader) clear(h http.Header) {
	for _, list := range [][]string{a.names, a.uids, a.groups} {
		for _, n := range list {
			h.Del(n)
		}
	}
	for k := range h {
		for _, p := range a.prefixes {
			if hasPrefixFold(k, p) {
				delete(h, k)
				break
			}
		}
	}
}

// firstValue is the first non-empty value among the first lines of the
// named headers, in order.
func firstValue(h http.Header, names []string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// allValues is every non-empty value of the named headers, each header
// line one value, in order.
func allValues(h http.Header, names []string) []string {
	var out []string
	for _, n := range names {
		for _, v := range h.Values(n) {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// extra collects the extra fields from headers starting with the
// prefixes, prefix by prefix and, within one, in sorted header-name order
// so that the result does not depend on map iteration. Nil if there are
// none.
func extra(h http.Header, prefixes []string) map[string][]string {
	var out map[string][]string
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, p := range prefixes {
		for _, k := range keys {
			if !hasPrefixFold(k, p) {
				continue
			}
			if out == nil {
				out = map[string][]string{}
			}
			key := UnescapeExtraKey(k[len(p):])
			out[key] = append(out[key], h[k]...)
		}
	}
	return out
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// authenticated adds system:authenticated as upstream's authenticated
// group adder does: not to system:anonymous, and not when the groups
// already say authenticated or unauthenticated.
func authenticated(u *user.Info) *user.Info {
	if u.Name == user.Anonymous || slices.Contains(u.Groups, user.AllAuthenticated) || slices.Contains(u.Groups, user.AllUnauthenticated) {
		return u
	}
	u.Groups = append(u.Groups, user.AllAuthenticated)
	return u
}

// wrappedVerifyError is a verification error and its wrapping.
type wrappedVerifyError struct{ err, wrapped error }

// wrapVerifyError wraps a failed verification of the proxy's chain. Every
// request with a client certificate that is not the proxy's fails it (the
// verifier answers the kept error), and the error is usually dropped (the
// next authenticator accepts the certificate): the wrapping of the last
// error is kept rather than formatted again for each request.
func (a *requestHeader) wrapVerifyError(err error) error {
	if w := a.lastVerifyErr.Load(); w != nil && sameError(w.err, err) {
		return w.wrapped
	}
	w := &wrappedVerifyError{err: err, wrapped: fmt.Errorf("requestheader: proxy certificate: %w", err)}
	a.lastVerifyErr.Store(w)
	return w.wrapped
}

// sameError reports whether a and b are the same error value (== on
// comparable dynamic types only: == on others would panic).
func sameError(a, b error) bool {
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}
