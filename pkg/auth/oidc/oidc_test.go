package oidc

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
)

// testAuthenticator is an authenticator of "https://issuer" with its keys
// preloaded (no discovery), and a signer of its key.
func testAuthenticator(t testing.TB, cfg JWTAuthenticator) (*Authenticator, *serviceaccount.Signer) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := serviceaccount.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Issuer.URL == "" {
		cfg.Issuer = Issuer{URL: "https://issuer", Audiences: []string{"kapi"}}
	}
	a, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.keys = []jwk{{key: key.Public()}}
	a.fetchedAt = time.Now()
	return a, signer
}

func sign(t testing.TB, s *serviceaccount.Signer, claims map[string]any) string {
	t.Helper()
	c := map[string]any{"iss": "https://issuer", "aud": "kapi", "exp": float64(time.Now().Add(time.Hour).Unix())}
	for k, v := range claims {
		c[k] = v
	}
	tok, err := s.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func ptr(s string) *string { return &s }

// TestMappings covers claim and expression mappings and rules.
func TestMappings(t *testing.T) {
	a, s := testAuthenticator(t, JWTAuthenticator{ClaimMappings: ClaimMappings{
		Username: PrefixedClaimOrExpression{Claim: "sub", Prefix: ptr("p:")},
		Groups:   PrefixedClaimOrExpression{Claim: "groups", Prefix: ptr("g:")},
		UID:      ClaimOrExpression{Expression: "claims.sub + '-uid'"},
		Extra:    []ExtraMapping{{Key: "example.com/x", ValueExpression: "['a', string(claims.sub)]"}},
	}})
	u, _, ok, err := a.AuthenticateToken(context.Background(), sign(t, s, map[string]any{"sub": "bob", "groups": "solo"}))
	if !ok || err != nil || u.Name != "p:bob" || u.UID != "bob-uid" || strings.Join(u.Groups, ",") != "g:solo,system:authenticated" ||
		strings.Join(u.Extra["example.com/x"], ",") != "a,bob" {
		t.Fatalf("got %+v %v %v", u, ok, err)
	}
	// Another issuer: no opinion; a non-JWT: no opinion.
	for _, tok := range []string{sign(t, s, map[string]any{"iss": "https://other", "sub": "x"}), "opaque"} {
		if _, _, ok, err := a.AuthenticateToken(context.Background(), tok); ok || err != nil {
			t.Errorf("foreign token: got %v %v, want no opinion", ok, err)
		}
	}
	for _, tc := range []struct {
		claims map[string]any
		want   string
	}{
		{map[string]any{"groups": "x"}, `oidc: parse username claims "sub": claim not present`},
		{map[string]any{"sub": 7}, `oidc: parse username claims "sub": claim is not a string`},
		{map[string]any{"sub": "x", "groups": []any{1}}, `oidc: parse groups claim "groups"`},
		{map[string]any{"sub": "x", "aud": []any{"a", "b"}}, `oidc: verify token: oidc: expected audience in ["kapi"] got ["a" "b"]`},
		{map[string]any{"sub": "x", "exp": float64(time.Now().Add(-time.Second).Unix())}, "oidc: verify token: oidc: token is expired"},
		{map[string]any{"sub": "x", "nbf": float64(time.Now().Add(10 * time.Minute).Unix())}, "before the nbf (not before) time"},
	} {
		_, _, ok, err := a.AuthenticateToken(context.Background(), sign(t, s, tc.claims))
		if ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v %v, want %q", tc.claims, ok, err, tc.want)
		}
	}
	// Within go-oidc's 5-minute nbf leeway.
	if _, _, ok, err := a.AuthenticateToken(context.Background(), sign(t, s, map[string]any{"sub": "x", "nbf": float64(time.Now().Add(4 * time.Minute).Unix())})); !ok || err != nil {
		t.Errorf("nbf within the leeway: got %v %v", ok, err)
	}
}

// TestFromFlags: upstream's translation of the --oidc-* flags.
func TestFromFlags(t *testing.T) {
	for _, tc := range []struct {
		claim, prefix, want string
	}{
		{"", "", "https://i#"},
		{"email", "", ""},
		{"sub", "-", ""},
		{"name", "x:", "x:"},
	} {
		j, err := FromFlags(FlagOptions{IssuerURL: "https://i", ClientID: "c", UsernameClaim: tc.claim, UsernamePrefix: tc.prefix})
		if err != nil {
			t.Fatal(err)
		}
		if *j.ClaimMappings.Username.Prefix != tc.want || j.Issuer.Audiences[0] != "c" {
			t.Errorf("claim %q prefix %q: got prefix %q", tc.claim, tc.prefix, *j.ClaimMappings.Username.Prefix)
		}
	}
}

// FuzzAuthenticateToken: arbitrary tokens never panic, and only tokens
// that carry a valid signature of the issuer's key are accepted.
func FuzzAuthenticateToken(f *testing.F) {
	a, s := testAuthenticator(f, JWTAuthenticator{
		ClaimValidationRules: []ClaimValidationRule{{Expression: "claims.?ok.orValue(true) == true"}},
		ClaimMappings: ClaimMappings{
			Username: PrefixedClaimOrExpression{Expression: "'u:' + string(claims.sub)"},
			Groups:   PrefixedClaimOrExpression{Expression: "claims.?groups.orValue([])"},
		},
		UserValidationRules: []UserValidationRule{{Expression: "user.username != 'u:evil'"}},
	})
	good := sign(f, s, map[string]any{"sub": "bob"})
	b64 := func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }
	payload := func(m map[string]any) string { b, _ := json.Marshal(m); return b64(string(b)) }
	parts := strings.Split(good, ".")
	for _, seed := range []string{
		good,
		sign(f, s, map[string]any{"sub": 1.5, "groups": []any{"a", 2}}),
		sign(f, s, map[string]any{"sub": "evil"}),
		sign(f, s, map[string]any{"sub": "x", "ok": false, "exp": 1e300}),
		b64(`{"alg":"none"}`) + "." + parts[1] + ".",
		parts[0] + "." + payload(map[string]any{"iss": "https://issuer", "sub": "mallory"}) + "." + parts[2],
		"a.b.c", "", "...",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		u, _, ok, err := a.AuthenticateToken(context.Background(), token)
		if !ok {
			return
		}
		if err != nil || u == nil || u.Name == "" {
			t.Fatalf("ok with err=%v user=%+v", err, u)
		}
		j, perr := serviceaccount.ParseJWS(token)
		if perr != nil || j.Verify(crypto.PublicKey(a.keys[0].key)) != nil {
			t.Fatalf("accepted a token that does not verify: %q", token)
		}
	})
}
