package e2e

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/kapitest"
)

// oidcIssuer is an OpenID Connect issuer the test runs on loopback over
// TLS: discovery document and JWKS, tokens signed RS256.
type oidcIssuer struct {
	srv    *httptest.Server
	key    *rsa.PrivateKey
	kid    string
	caFile string
}

func newOIDCIssuer(t *testing.T) *oidcIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &oidcIssuer{key: key, kid: "test-key"}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss.srv.URL, "jwks_uri": iss.srv.URL + "/keys",
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		b64 := base64.RawURLEncoding.EncodeToString
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "use": "sig", "alg": "RS256", "kid": iss.kid,
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	iss.srv = httptest.NewTLSServer(mux) // listens on 127.0.0.1
	t.Cleanup(iss.srv.Close)
	iss.caFile = filepath.Join(t.TempDir(), "oidc-ca.pem")
	if err := os.WriteFile(iss.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: iss.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return iss
}

// token signs claims (iss, aud "kapi", exp in an hour unless overridden)
// with key (nil: the issuer's).
func (iss *oidcIssuer) token(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	if key == nil {
		key = iss.key
	}
	c := map[string]any{"iss": iss.srv.URL, "aud": "kapi", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	hb, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": iss.kid, "typ": "JWT"})
	pb, _ := json.Marshal(c)
	signed := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(pb)
	digest := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// TestAuthnOIDCFlags: the --oidc-* flags against an issuer on loopback:
// the user and groups from claims, the required claim, email_verified,
// and every bad token a 401; kubectl 1.27 and 1.33 use an OIDC token.
func TestAuthnOIDCFlags(t *testing.T) {
	iss := newOIDCIssuer(t)
	srv := authnServer(t, "--oidc-issuer-url="+iss.srv.URL, "--oidc-client-id=kapi", "--oidc-ca-file="+iss.caFile,
		"--oidc-username-claim=email", "--oidc-groups-claim=groups", "--oidc-groups-prefix=oidc:", "--oidc-required-claim=hd=example.com")
	claims := map[string]any{"sub": "1234", "email": "alice@example.com", "email_verified": true, "groups": []string{"dev", "ops"}, "hd": "example.com"}
	good := iss.token(t, nil, claims)
	u, err := whoami(t, srv, good)
	if err != nil {
		t.Fatalf("whoami with an OIDC token: %v", err)
	}
	if u.Username != "alice@example.com" || strings.Join(u.Groups, ",") != "oidc:dev,oidc:ops,system:authenticated" {
		t.Errorf("OIDC user: got %+v", u)
	}
	// A username claim other than email is prefixed with "<issuer>#".
	other := authnServer(t, "--oidc-issuer-url="+iss.srv.URL, "--oidc-client-id=kapi", "--oidc-ca-file="+iss.caFile)
	if u, err := whoami(t, other, good); err != nil || u.Username != iss.srv.URL+"#1234" {
		t.Errorf("sub with the default prefix: got %+v, %v", u, err)
	}

	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for kk, vv := range claims {
			c[kk] = vv
		}
		c[k] = v
		return c
	}
	for _, tc := range []struct{ name, token string }{
		{"required claim missing", iss.token(t, nil, with("hd", nil))},
		{"required claim wrong", iss.token(t, nil, with("hd", "evil.com"))},
		{"email not verified", iss.token(t, nil, with("email_verified", false))},
		{"wrong audience", iss.token(t, nil, with("aud", "someone-else"))},
		{"expired", iss.token(t, nil, with("exp", time.Now().Add(-time.Minute).Unix()))},
		{"no expiry", iss.token(t, nil, with("exp", nil))},
		{"not yet valid", iss.token(t, nil, with("nbf", time.Now().Add(time.Hour).Unix()))},
		{"signed by another key", iss.token(t, otherKey, claims)},
		{"groups not strings", iss.token(t, nil, with("groups", 42))},
		{"alg none", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + strings.Split(good, ".")[1] + "."},
	} {
		unauthorized(t, srv, tc.name, tc.token)
	}

	for _, kubectl := range kubectls(t) {
		kc := writeTokenKubeconfig(t, srv, good)
		if out, stderr, err := runKubectl(t, kubectl, kc, "get", "namespace", "default", "-o", "name"); err != nil || out != "namespace/default\n" {
			t.Errorf("%s get with an OIDC token: got %q (%v)\n%s", filepath.Base(kubectl), out, err, stderr)
		}
		if strings.HasSuffix(kubectl, ".1.27") {
			continue // its whoami asks v1alpha1/v1beta1, which v1.37 no longer serves
		}
		if out, stderr, err := runKubectl(t, kubectl, kc, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); err != nil || out != "alice@example.com" {
			t.Errorf("%s auth whoami with an OIDC token: got %q (%v)\n%s", filepath.Base(kubectl), out, err, stderr)
		}
	}
}

// TestAuthnStructuredConfig: an --authentication-config file with a jwt
// authenticator using CEL (claim validation, username, groups, uid and
// extra mappings, user validation) and anonymous limited to /healthz.
func TestAuthnStructuredConfig(t *testing.T) {
	iss := newOIDCIssuer(t)
	ca, err := os.ReadFile(iss.caFile)
	if err != nil {
		t.Fatal(err)
	}
	indented := "        " + strings.ReplaceAll(strings.TrimSpace(string(ca)), "\n", "\n        ")
	cfg := `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
  - issuer:
      url: ` + iss.srv.URL + `
      audiences: [other, kapi]
      audienceMatchPolicy: MatchAny
      certificateAuthority: |
` + indented + `
    claimValidationRules:
      - expression: 'claims.hd == "example.com"'
        message: the hosted domain must be example.com
      - claim: tier
        requiredValue: gold
    claimMappings:
      username:
        expression: '"oidc:" + claims.sub'
      groups:
        expression: 'claims.groups.map(g, "team:" + g)'
      uid:
        claim: sub
      extra:
        - key: example.com/tenant
          valueExpression: 'claims.tenant'
    userValidationRules:
      - expression: '!user.username.startsWith("oidc:evil")'
        message: evil users are not welcome
anonymous:
  enabled: true
  conditions:
    - path: /healthz
`
	path := filepath.Join(t.TempDir(), "authn.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := authnServer(t, "--authentication-config="+path)
	claims := map[string]any{"sub": "bob", "hd": "example.com", "tier": "gold", "groups": []string{"a", "b"}, "tenant": "acme", "aud": []string{"kapi"}}
	u, err := whoami(t, srv, iss.token(t, nil, claims))
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	if u.Username != "oidc:bob" || u.UID != "bob" || strings.Join(u.Groups, ",") != "team:a,team:b,system:authenticated" ||
		strings.Join(u.Extra["example.com/tenant"], ",") != "acme" {
		t.Errorf("mapped user: got %+v", u)
	}
	// The static token file still works beside it.
	if u, err := whoami(t, srv, "static-token"); err != nil || u.Username != "alice" {
		t.Errorf("static token beside the config: got %+v, %v", u, err)
	}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for kk, vv := range claims {
			c[kk] = vv
		}
		c[k] = v
		return c
	}
	for _, tc := range []struct {
		name   string
		claims map[string]any
	}{
		{"claim validation expression false", with("hd", "evil.com")},
		{"required claim wrong", with("tier", "silver")},
		{"user validation rule false", with("sub", "evil-eve")},
		{"audience not listed", with("aud", []string{"nobody"})},
		{"extra expression on a missing claim", with("tenant", nil)},
	} {
		c := tc.claims
		for k, v := range c {
			if v == nil {
				delete(c, k)
			}
		}
		unauthorized(t, srv, tc.name, iss.token(t, nil, c))
	}
	// Anonymous only for /healthz.
	if code, _ := getWithToken(t, srv, "", "/healthz"); code != http.StatusOK {
		t.Errorf("anonymous /healthz: got %d, want 200", code)
	}
	if code, _ := getWithToken(t, srv, "", "/livez"); code != http.StatusUnauthorized {
		t.Errorf("anonymous /livez: got %d, want 401 (not in the conditions)", code)
	}
}

// TestAuthnConfigExclusions: the structured configuration excludes the
// --oidc-* flags, and --anonymous-auth when it configures anonymous, with
// upstream's messages; a bad configuration stops the start.
func TestAuthnConfigExclusions(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	anon := write("anon.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: false\n")
	bad := write("bad.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: http://insecure\n    audiences: [a]\n  claimMappings:\n    username:\n      claim: sub\n")
	badCEL := write("badcel.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: https://127.0.0.1:1\n    audiences: [a]\n  claimMappings:\n    username:\n      expression: 'claims.sub +'\n")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--authentication-config=" + anon, "--oidc-issuer-url=https://x", "--oidc-client-id=k"}, "authentication-config file and oidc-* flags are mutually exclusive"},
		{[]string{"--authentication-config=" + anon, "--anonymous-auth=true"}, "--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file"},
		{[]string{"--authentication-config=" + bad}, "URL scheme must be https"},
		{[]string{"--authentication-config=" + bad}, "prefix is required when claim is set"},
		{[]string{"--authentication-config=" + badCEL}, "claimMappings.username.expression: compilation failed"},
		{[]string{"--oidc-issuer-url=https://x"}, "oidc-issuer-url and oidc-client-id must be specified together"},
	} {
		s, err := kapitest.StartE(t.TempDir(), logger, kapitest.WithFlags(tc.flags...))
		if err == nil {
			_ = s.Stop()
			t.Errorf("%v: started, want %q", tc.flags, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.flags, err, tc.want)
		}
	}
	// anonymous disabled by the file: 401 without credentials.
	srv := kapitest.Start(t, kapitest.WithFlags("--authentication-config="+anon))
	unauthorized(t, srv, "no credentials with anonymous disabled in the file", "")
}
