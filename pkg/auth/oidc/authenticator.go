package oidc

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"

	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// DefaultSigningAlgs are the algorithms accepted from a structured
// configuration's issuers (upstream accepts every asymmetric one); the
// --oidc-signing-algs flag defaults to RS256 only.
var DefaultSigningAlgs = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"}

// Timing of the issuer's keys.
const (
	// nbfLeeway is go-oidc's allowance for clock skew on nbf.
	nbfLeeway = 5 * time.Minute
	// refetchInterval bounds how often an unknown kid refetches the keys.
	refetchInterval = 10 * time.Second
	fetchTimeout    = 10 * time.Second
	maxDocBytes     = 1 << 20
)

// Authenticator authenticates the JWTs of one issuer.
type Authenticator struct {
	cfg    JWTAuthenticator
	algs   []string
	client *http.Client
	now    func() time.Time

	claimRules []claimRule
	username   mapping
	groups     mapping
	uid        mapping
	extra      []extraMapping
	userRules  []userRule

	mu        sync.Mutex
	keys      []jwk
	fetchedAt time.Time
}

type claimRule struct {
	claim, requiredValue string
	prg                  *program
	message              string
}

type userRule struct {
	prg     *program
	message string
}

// mapping is a claim with a prefix, or an expression.
type mapping struct {
	claim  string
	prefix string
	prg    *program
}

type extraMapping struct {
	key string
	prg *program
}

type jwk struct {
	kid string
	key crypto.PublicKey
}

// New builds the authenticator of one jwt configuration, compiling its
// expressions. algs (nil: DefaultSigningAlgs) are the accepted algorithms.
func New(cfg JWTAuthenticator, algs []string) (*Authenticator, error) {
	if len(algs) == 0 {
		algs = DefaultSigningAlgs
	}
	a := &Authenticator{cfg: cfg, algs: algs, now: time.Now}
	for _, alg := range algs {
		if !slices.Contains(DefaultSigningAlgs, alg) {
			return nil, fmt.Errorf("oidc: unsupported signing algorithm %q", alg)
		}
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca := cfg.Issuer.CertificateAuthority; ca != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ca)) {
			return nil, errors.New("oidc: issuer.certificateAuthority holds no PEM certificate")
		}
		tlsCfg.RootCAs = pool
	}
	a.client = &http.Client{Timeout: fetchTimeout, Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment}}

	claimsEnv, err := newEnv("claims")
	if err != nil {
		return nil, err
	}
	userEnv, err := newEnv("user")
	if err != nil {
		return nil, err
	}
	for i, r := range cfg.ClaimValidationRules {
		cr := claimRule{claim: r.Claim, requiredValue: r.RequiredValue, message: r.Message}
		if r.Expression != "" {
			if cr.prg, err = compile(claimsEnv, r.Expression); err != nil {
				return nil, fmt.Errorf("claimValidationRules[%d].expression: %w", i, err)
			}
		}
		a.claimRules = append(a.claimRules, cr)
	}
	m := cfg.ClaimMappings
	if a.username, err = newMapping(claimsEnv, m.Username.Claim, m.Username.Prefix, m.Username.Expression, "claimMappings.username"); err != nil {
		return nil, err
	}
	if a.groups, err = newMapping(claimsEnv, m.Groups.Claim, m.Groups.Prefix, m.Groups.Expression, "claimMappings.groups"); err != nil {
		return nil, err
	}
	if a.uid, err = newMapping(claimsEnv, m.UID.Claim, nil, m.UID.Expression, "claimMappings.uid"); err != nil {
		return nil, err
	}
	for i, e := range m.Extra {
		p, err := compile(claimsEnv, e.ValueExpression)
		if err != nil {
			return nil, fmt.Errorf("claimMappings.extra[%d].valueExpression: %w", i, err)
		}
		a.extra = append(a.extra, extraMapping{key: e.Key, prg: p})
	}
	for i, r := range cfg.UserValidationRules {
		p, err := compile(userEnv, r.Expression)
		if err != nil {
			return nil, fmt.Errorf("userValidationRules[%d].expression: %w", i, err)
		}
		a.userRules = append(a.userRules, userRule{prg: p, message: r.Message})
	}
	return a, nil
}

func newMapping(env *cel.Env, claim string, prefix *string, expr, where string) (mapping, error) {
	m := mapping{claim: claim}
	if prefix != nil {
		m.prefix = *prefix
	}
	if expr != "" {
		p, err := compile(env, expr)
		if err != nil {
			return m, fmt.Errorf("%s.expression: %w", where, err)
		}
		m.prg = p
	}
	return m, nil
}

// Issuer is the issuer URL this authenticator accepts.
func (a *Authenticator) Issuer() string { return a.cfg.Issuer.URL }

// AuthenticateToken authenticates a JWT of the issuer. A token that is not
// a JWT, or names another issuer, gets no opinion; one of this issuer that
// fails a check is an error. The audiences returned are nil: OIDC tokens
// are audience agnostic towards the API server (the caller wraps them).
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*user.Info, []string, bool, error) {
	payload, ok := serviceaccount.UnverifiedPayload(token)
	if !ok {
		return nil, nil, false, nil
	}
	var peek struct {
		Issuer string `json:"iss"`
	}
	if json.Unmarshal(payload, &peek) != nil || peek.Issuer != a.cfg.Issuer.URL {
		return nil, nil, false, nil
	}
	jws, err := serviceaccount.ParseJWS(token)
	if err != nil {
		return nil, nil, false, fmt.Errorf("oidc: malformed jwt: %w", err)
	}
	if !slices.Contains(a.algs, jws.Algorithm()) {
		return nil, nil, false, fmt.Errorf("oidc: verify token: oidc: id token signed with unsupported algorithm, expected %q got %q", a.algs, jws.Algorithm())
	}
	if err := a.verify(ctx, jws); err != nil {
		return nil, nil, false, fmt.Errorf("oidc: verify token: %w", err)
	}
	var claims map[string]any
	dec := json.NewDecoder(bytes.NewReader(jws.Payload()))
	if err := dec.Decode(&claims); err != nil {
		return nil, nil, false, fmt.Errorf("oidc: parse claims: %w", err)
	}
	if err := a.checkStandardClaims(claims); err != nil {
		return nil, nil, false, fmt.Errorf("oidc: verify token: %w", err)
	}
	u, err := a.userOf(claims)
	if err != nil {
		return nil, nil, false, err
	}
	return u, nil, true, nil
}

// checkStandardClaims checks aud, exp and nbf as go-oidc does.
func (a *Authenticator) checkStandardClaims(claims map[string]any) error {
	auds, err := stringsOf(claims["aud"])
	if err != nil {
		return fmt.Errorf("oidc: malformed claim aud: %w", err)
	}
	match := false
	for _, want := range a.cfg.Issuer.Audiences {
		if slices.Contains(auds, want) {
			match = true
		}
	}
	if !match {
		return fmt.Errorf("oidc: expected audience in %q got %q", a.cfg.Issuer.Audiences, auds)
	}
	now := a.now()
	exp, ok := numericDate(claims["exp"])
	if !ok || !now.Before(exp) {
		return fmt.Errorf("oidc: token is expired (Token Expiry: %v)", exp)
	}
	if v, present := claims["nbf"]; present {
		nbf, ok := numericDate(v)
		if !ok {
			return errors.New("oidc: malformed claim nbf")
		}
		if now.Add(nbfLeeway).Before(nbf) {
			return fmt.Errorf("oidc: current time %v before the nbf (not before) time: %v", now, nbf)
		}
	}
	return nil
}

func numericDate(v any) (time.Time, bool) {
	f, ok := v.(float64)
	if !ok || f != f || f > 1e15 || f < -1e15 {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}

func stringsOf(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("not a string: %v", e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a string or a list of strings: %T", v)
}

// userOf validates claims and maps them to the user.
func (a *Authenticator) userOf(claims map[string]any) (*user.Info, error) {
	vars := map[string]any{"claims": claims}
	for i, r := range a.claimRules {
		if r.prg == nil {
			v, present := claims[r.claim]
			if !present {
				return nil, fmt.Errorf("oidc: required claim %s not present in ID token", r.claim)
			}
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("oidc: parse claim %s: claim is not a string", r.claim)
			}
			if s != r.requiredValue {
				return nil, fmt.Errorf("oidc: required claim %s value does not match. Got = %s, want = %s", r.claim, s, r.requiredValue)
			}
			continue
		}
		ok, err := r.prg.evalBool(vars)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating claim validation expression: %w", err)
		}
		if !ok {
			return nil, fmt.Errorf("oidc: error evaluating claim validation expression: claimValidationRules[%d].expression: %s", i, orDefault(r.message, "expression "+strconvQuote(r.prg.expr)+" resulted in error"))
		}
	}

	u := &user.Info{}
	if a.username.prg != nil {
		name, err := a.username.prg.evalString(vars)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating username claim expression: %w", err)
		}
		if name == "" {
			return nil, errors.New("oidc: empty username via CEL expression is not allowed")
		}
		u.Name = name
	} else {
		v, present := claims[a.username.claim]
		if !present {
			return nil, fmt.Errorf("oidc: parse username claims %q: claim not present", a.username.claim)
		}
		name, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("oidc: parse username claims %q: claim is not a string", a.username.claim)
		}
		if a.username.claim == "email" {
			// As upstream: an email_verified claim, when present, must be
			// true.
			if ev, present := claims["email_verified"]; present {
				if b, ok := ev.(bool); !ok {
					return nil, errors.New("oidc: parse 'email_verified' claim: not a bool")
				} else if !b {
					return nil, fmt.Errorf("oidc: email not verified")
				}
			}
		}
		u.Name = a.username.prefix + name
	}

	switch {
	case a.groups.prg != nil:
		gs, err := a.groups.prg.evalStrings(vars)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating group claim expression: %w", err)
		}
		u.Groups = gs
	case a.groups.claim != "":
		gs, err := stringsOf(claims[a.groups.claim])
		if err != nil {
			return nil, fmt.Errorf("oidc: parse groups claim %q: %w", a.groups.claim, err)
		}
		for _, g := range gs {
			u.Groups = append(u.Groups, a.groups.prefix+g)
		}
	}

	switch {
	case a.uid.prg != nil:
		uid, err := a.uid.prg.evalString(vars)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating uid claim expression: %w", err)
		}
		u.UID = uid
	case a.uid.claim != "":
		v, present := claims[a.uid.claim]
		if !present {
			return nil, fmt.Errorf("oidc: parse uid claim %q: claim not present", a.uid.claim)
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("oidc: parse uid claim %q: claim is not a string", a.uid.claim)
		}
		u.UID = s
	}

	for _, e := range a.extra {
		vs, err := e.prg.evalStrings(vars)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating extra claim expression: %w", err)
		}
		if len(vs) == 0 {
			continue
		}
		if u.Extra == nil {
			u.Extra = map[string][]string{}
		}
		u.Extra[e.key] = vs
	}

	if len(a.userRules) > 0 {
		extra := map[string]any{}
		for k, v := range u.Extra {
			extra[k] = v
		}
		groups := u.Groups
		if groups == nil {
			groups = []string{}
		}
		uv := map[string]any{"user": map[string]any{"username": u.Name, "uid": u.UID, "groups": groups, "extra": extra}}
		for i, r := range a.userRules {
			ok, err := r.prg.evalBool(uv)
			if err != nil {
				return nil, fmt.Errorf("oidc: error evaluating user info validation rule: %w", err)
			}
			if !ok {
				return nil, fmt.Errorf("oidc: error evaluating user info validation rule: userValidationRules[%d].expression: %s", i, orDefault(r.message, "expression "+strconvQuote(r.prg.expr)+" resulted in error"))
			}
		}
	}
	if !slices.Contains(u.Groups, user.AllAuthenticated) {
		u.Groups = append(u.Groups, user.AllAuthenticated)
	}
	return u, nil
}

func orDefault(s, d string) string {
	if s != "" {
		return s
	}
	return d
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// verify checks the signature with the issuer's keys: the key of the
// token's kid (all keys without one), refetching the keys once, rate
// limited, when none verifies.
func (a *Authenticator) verify(ctx context.Context, jws *serviceaccount.JWS) error {
	keys, err := a.currentKeys(ctx, false)
	if err != nil {
		return err
	}
	if tryKeys(keys, jws) == nil {
		return nil
	}
	if keys, err = a.currentKeys(ctx, true); err != nil {
		return err
	}
	return tryKeys(keys, jws)
}

func tryKeys(keys []jwk, jws *serviceaccount.JWS) error {
	kid := jws.KeyID()
	for _, k := range keys {
		if kid != "" && k.kid != "" && k.kid != kid {
			continue
		}
		if jws.Verify(k.key) == nil {
			return nil
		}
	}
	return errors.New("failed to verify signature: failed to verify id token signature")
}

// currentKeys returns the cached keys, fetching them first if there are
// none, or if refresh and the last fetch is older than refetchInterval.
func (a *Authenticator) currentKeys(ctx context.Context, refresh bool) ([]jwk, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.keys) > 0 && (!refresh || a.now().Sub(a.fetchedAt) < refetchInterval) {
		return a.keys, nil
	}
	if len(a.keys) == 0 && !a.fetchedAt.IsZero() && a.now().Sub(a.fetchedAt) < time.Second {
		return nil, errors.New("oidc: authenticator not initialized")
	}
	a.fetchedAt = a.now()
	keys, err := a.fetchKeys(ctx)
	if err != nil {
		if len(a.keys) > 0 {
			return a.keys, nil
		}
		return nil, fmt.Errorf("oidc: authenticator not initialized: %w", err)
	}
	a.keys = keys
	return keys, nil
}

// fetchKeys reads the discovery document and the key set it points at.
func (a *Authenticator) fetchKeys(ctx context.Context) ([]jwk, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	discovery := a.cfg.Issuer.DiscoveryURL
	if discovery == "" {
		discovery = strings.TrimSuffix(a.cfg.Issuer.URL, "/") + "/.well-known/openid-configuration"
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := a.getJSON(ctx, discovery, &doc); err != nil {
		return nil, err
	}
	if doc.Issuer != a.cfg.Issuer.URL {
		return nil, fmt.Errorf("oidc: issuer did not match the issuer returned by provider, expected %q got %q", a.cfg.Issuer.URL, doc.Issuer)
	}
	if doc.JWKSURI == "" {
		return nil, errors.New("oidc: discovery document has no jwks_uri")
	}
	var set struct {
		Keys []struct {
			Kty, Kid, Use, Alg, N, E, Crv, X, Y string
		} `json:"keys"`
	}
	if err := a.getJSON(ctx, doc.JWKSURI, &set); err != nil {
		return nil, err
	}
	var keys []jwk
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pub, err := parseJWK(k.Kty, k.N, k.E, k.Crv, k.X, k.Y)
		if err != nil {
			continue // keys of other kinds are skipped, as go-jose does
		}
		keys = append(keys, jwk{kid: k.Kid, key: pub})
	}
	if len(keys) == 0 {
		return nil, errors.New("oidc: the issuer's key set holds no usable key")
	}
	return keys, nil
}

func (a *Authenticator) getJSON(ctx context.Context, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("oidc: fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocBytes))
	if err != nil {
		return fmt.Errorf("oidc: read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("oidc: fetch %s: %s", url, resp.Status)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("oidc: decode %s: %w", url, err)
	}
	return nil
}

func parseJWK(kty, n, e, crv, x, y string) (crypto.PublicKey, error) {
	dec := func(s string) (*big.Int, error) {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			return nil, err
		}
		return new(big.Int).SetBytes(b), nil
	}
	switch kty {
	case "RSA":
		nn, err := dec(n)
		if err != nil {
			return nil, err
		}
		ee, err := dec(e)
		if err != nil || !ee.IsInt64() || ee.Int64() < 3 || ee.Int64() > 1<<31 {
			return nil, errors.New("bad exponent")
		}
		if nn.BitLen() < 1024 {
			return nil, errors.New("RSA key too small")
		}
		return &rsa.PublicKey{N: nn, E: int(ee.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, fmt.Errorf("unsupported curve %q", crv)
		}
		xx, err := dec(x)
		if err != nil {
			return nil, err
		}
		yy, err := dec(y)
		if err != nil {
			return nil, err
		}
		size := (curve.Params().BitSize + 7) / 8
		raw := make([]byte, 1+2*size)
		raw[0] = 4
		if len(xx.Bytes()) > size || len(yy.Bytes()) > size {
			return nil, errors.New("bad point")
		}
		xx.FillBytes(raw[1 : 1+size])
		yy.FillBytes(raw[1+size:])
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, raw)
		if err != nil {
			return nil, err
		}
		return pub, nil
	}
	return nil, fmt.Errorf("unsupported key type %q", kty)
}
