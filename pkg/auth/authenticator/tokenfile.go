package authenticator

import (
	"context"
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Token authenticates a bearer token. It returns the user and the
// audiences the token is good for with ok, no opinion as (nil, nil, false,
// nil), and an error for a token it recognizes but rejects. Requested
// audiences come from the context ([AudiencesFrom]); without them the API
// server's own audiences are meant. It must be safe for concurrent use.
type Token interface {
	AuthenticateToken(ctx context.Context, token string) (*user.Info, []string, bool, error)
}

// TokenFunc adapts a function to [Token].
type TokenFunc func(ctx context.Context, token string) (*user.Info, []string, bool, error)

// AuthenticateToken calls f.
func (f TokenFunc) AuthenticateToken(ctx context.Context, token string) (*user.Info, []string, bool, error) {
	return f(ctx, token)
}

// UnionToken tries each token authenticator in order; the first success
// wins; if none succeeds, the errors are joined. Nil entries are skipped.
func UnionToken(auths ...Token) Token {
	var list []Token
	for _, a := range auths {
		if a != nil {
			list = append(list, a)
		}
	}
	return TokenFunc(func(ctx context.Context, token string) (*user.Info, []string, bool, error) {
		var errs []error
		for _, a := range list {
			u, auds, ok, err := a.AuthenticateToken(ctx, token)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				return u, auds, true, nil
			}
		}
		return nil, nil, false, errors.Join(errs...)
	})
}

// AudienceAgnostic wraps a token authenticator whose tokens are not bound
// to audiences (static tokens) as upstream's WrapAudienceAgnosticToken
// does: with no audiences requested, or requested ones that include one of
// the API server's (implicit), it authenticates and answers those
// audiences; otherwise it has no opinion.
func AudienceAgnostic(implicit []string, a Token) Token {
	return TokenFunc(func(ctx context.Context, token string) (*user.Info, []string, bool, error) {
		requested, ok := AudiencesFrom(ctx)
		if !ok || len(requested) == 0 {
			u, _, ok, err := a.AuthenticateToken(ctx, token)
			return u, implicit, ok, err
		}
		auds := IntersectAudiences(implicit, requested)
		if len(auds) == 0 {
			return nil, nil, false, nil
		}
		u, _, ok, err := a.AuthenticateToken(ctx, token)
		return u, auds, ok, err
	})
}

// BearerRequest authenticates requests by their "Authorization: Bearer"
// token with a (upstream's bearertoken authenticator): no token is no
// opinion; a token no authenticator accepts, without an error of its own,
// is [ErrInvalidBearerToken].
func BearerRequest(a Token) Request {
	return RequestFunc(func(r *http.Request) (*user.Info, bool, error) {
		token, ok := BearerToken(r)
		if !ok {
			return nil, false, nil
		}
		u, _, ok, err := a.AuthenticateToken(r.Context(), token)
		if err != nil {
			return nil, false, err
		}
		if !ok || u == nil {
			return nil, false, ErrInvalidBearerToken
		}
		return authenticated(u), true, nil
	})
}

// staticTokens authenticates the tokens of a --token-auth-file.
type staticTokens struct{ entries []tokenEntry }

// NewStaticTokens returns an authenticator of a fixed token set, compared
// in constant time (audience agnostic; wrap it with AudienceAgnostic).
func NewStaticTokens(tokens map[string]*user.Info) Token {
	a := &staticTokens{}
	for t, u := range tokens {
		if t != "" && u != nil {
			a.entries = append(a.entries, tokenEntry{token: []byte(t), user: authenticated(u)})
		}
	}
	return a
}

func (a *staticTokens) AuthenticateToken(_ context.Context, token string) (*user.Info, []string, bool, error) {
	var found *user.Info
	for _, e := range a.entries {
		if subtle.ConstantTimeCompare(e.token, []byte(token)) == 1 {
			found = e.user
		}
	}
	if found == nil {
		return nil, nil, false, nil
	}
	return authenticated(found), nil, true, nil
}

// LoadTokenFile reads a --token-auth-file: CSV lines of
// token,user,uid[,"group1,group2"] (upstream's tokenfile format). Lines
// with fewer than three columns are an error; empty tokens and repeated
// tokens are skipped with a warning, the later line winning for a repeat
// (as upstream, staging/src/k8s.io/apiserver/pkg/authentication/token/tokenfile).
func LoadTokenFile(path string, logger *slog.Logger) (map[string]*user.Info, error) {
	if logger == nil {
		logger = slog.Default()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	tokens := map[string]*user.Info{}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("token file %q: %w", path, err)
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("token file '%s' must have at least 3 columns (token, user name, user uid), found %d", path, len(rec))
		}
		// Fields are taken as they are, untrimmed, as upstream's NewCSV
		// takes them.
		token := rec[0]
		if token == "" {
			logger.Warn("empty token has been found in token file", "file", path, "line", line)
			continue
		}
		u := &user.Info{Name: rec[1], UID: rec[2]}
		if _, dup := tokens[token]; dup {
			logger.Warn("duplicate token has been found in token file", "file", path, "line", line)
		}
		if len(rec) >= 4 {
			u.Groups = strings.Split(rec[3], ",")
		}
		tokens[token] = u
	}
	return tokens, nil
}
