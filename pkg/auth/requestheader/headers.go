package requestheader

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// The headers kapi (like kubeadm for kube-apiserver) uses between the
// aggregator and its backends.
const (
	UsernameHeader    = "X-Remote-User"
	UIDHeader         = "X-Remote-Uid"
	GroupHeader       = "X-Remote-Group"
	ExtraHeaderPrefix = "X-Remote-Extra-"
)

// SetHeaders makes h carry u for an authenticating-proxy hop, as client-go's
// auth-proxy round tripper does for kube-aggregator: it first deletes, in
// any letter case, the Authorization header, every Impersonate-* header and
// any X-Remote-User, X-Remote-Uid, X-Remote-Group and X-Remote-Extra-*
// header already present; then it writes X-Remote-User, X-Remote-Uid (only
// if u.UID is set), one X-Remote-Group line per group and one
// X-Remote-Extra-<key> line per extra value, where <key> is escaped so the
// receiver can recover it: bytes that are not valid in a header name, and
// '%', become %XX (receivers lower-case the key before unescaping, so extra
// keys should be lower-case, as Kubernetes requires). With a nil u only the
// deletions happen. h must not be nil.
func SetHeaders(h http.Header, u *user.Info) {
	for k := range h {
		lk := strings.ToLower(k)
		switch {
		case lk == "authorization",
			strings.HasPrefix(lk, "impersonate-"),
			lk == "x-remote-user",
			lk == "x-remote-uid",
			lk == "x-remote-group",
			strings.HasPrefix(lk, "x-remote-extra-"):
			delete(h, k)
		}
	}
	if u == nil {
		return
	}
	h.Set(UsernameHeader, u.Name)
	if u.UID != "" {
		h.Set(UIDHeader, u.UID)
	}
	for _, g := range u.Groups {
		h.Add(GroupHeader, g)
	}
	for k, vs := range u.Extra {
		name := ExtraHeaderPrefix + EscapeExtraKey(k)
		for _, v := range vs {
			h.Add(name, v)
		}
	}
}

// EscapeExtraKey encodes an extra key for use in a header name: every byte
// that is not an RFC 7230 token character, and '%', becomes %XX (upper-case
// hex), as upstream's headerKeyEscape does.
func EscapeExtraKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '%' || !isTokenByte(c) {
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// UnescapeExtraKey decodes the part of a header name after the extra
// prefix, as upstream does: the name is lower-cased, then %-decoded as a
// URL path segment; if that fails the lower-cased name is returned as is.
func UnescapeExtraKey(encoded string) string {
	lower := strings.ToLower(encoded)
	key, err := url.PathUnescape(lower)
	if err != nil {
		return lower
	}
	return key
}

// isTokenByte reports whether c may appear in an HTTP header field name
// (RFC 7230 tchar).
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
