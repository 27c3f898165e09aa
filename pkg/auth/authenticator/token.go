package authenticator

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// ErrInvalidBearerToken is returned for a bearer token no authenticator
// knows.
var ErrInvalidBearerToken = errors.New("invalid bearer token")

// NewTokenAuthenticator authenticates "Authorization: Bearer <token>"
// requests against a fixed set of tokens, such as the loopback client's.
// Tokens are compared in constant time. A request without a bearer token
// gets no opinion; an unknown token is [ErrInvalidBearerToken]. The users
// returned are copies, in the system:authenticated group. The map is copied;
// empty tokens and nil users are ignored.
func NewTokenAuthenticator(tokens map[string]*user.Info) Request {
	a := &tokenAuthenticator{}
	for t, u := range tokens {
		if t != "" && u != nil {
			a.tokens = append(a.tokens, tokenEntry{token: []byte(t), user: authenticated(u)})
		}
	}
	return a
}

type tokenEntry struct {
	token []byte
	user  *user.Info
}

type tokenAuthenticator struct {
	tokens []tokenEntry
}

var _ Request = (*tokenAuthenticator)(nil)

func (a *tokenAuthenticator) AuthenticateRequest(r *http.Request) (*user.Info, bool, error) {
	token, ok := BearerToken(r)
	if !ok {
		return nil, false, nil
	}
	var found *user.Info
	// Compare against every entry so the time taken does not reveal which
	// token, or how much of one, matched.
	for _, e := range a.tokens {
		if subtle.ConstantTimeCompare(e.token, []byte(token)) == 1 {
			found = e.user
		}
	}
	if found == nil {
		return nil, false, ErrInvalidBearerToken
	}
	return authenticated(found), true, nil
}

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header. The scheme is case-insensitive, as upstream parses it; anything
// after a second space is ignored.
func BearerToken(r *http.Request) (string, bool) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, rest, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token, _, _ := strings.Cut(rest, " ")
	if token == "" {
		return "", false
	}
	return token, true
}
