package serviceaccount

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
)

func mustSigner(t testing.TB, k crypto.Signer) *Signer {
	t.Helper()
	s, err := NewSigner(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSignVerifyAlgorithms: each supported key signs with upstream's
// algorithm and verifies; RS and PS signatures made here by hand verify
// under their alg; a key of another type or curve never does.
func TestSignVerifyAlgorithms(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	for _, tc := range []struct {
		key     crypto.Signer
		wantAlg string
	}{{rsaKey, "RS256"}, {p256, "ES256"}, {p384, "ES384"}, {p521, "ES512"}} {
		s := mustSigner(t, tc.key)
		if s.Algorithm() != tc.wantAlg {
			t.Errorf("%T: alg %s, want %s", tc.key, s.Algorithm(), tc.wantAlg)
		}
		tok, err := s.Sign(Claims{Issuer: "i"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := parseJWS(tok)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.verify(tc.key.Public()); err != nil {
			t.Errorf("%s: own key: %v", tc.wantAlg, err)
		}
		for _, other := range []crypto.Signer{rsaKey, p256, p384, p521} {
			if other == tc.key {
				continue
			}
			if err := p.verify(other.Public()); err == nil {
				t.Errorf("%s verified with a %T of another size or type", tc.wantAlg, other)
			}
		}
	}
	// PS256 made by hand (kapi never signs PS, but accepts it).
	signed := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"PS256"}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"i"}`))
	digest := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPSS(rand.Reader, rsaKey, crypto.SHA256, digest[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	if err != nil {
		t.Fatal(err)
	}
	p, err := parseJWS(signed + "." + base64.RawURLEncoding.EncodeToString(sig))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.verify(rsaKey.Public()); err != nil {
		t.Errorf("PS256: %v", err)
	}
	for _, alg := range []string{"none", "HS256", "", "RS1"} {
		p.header.Alg = alg
		if err := p.verify(rsaKey.Public()); !errors.Is(err, ErrUnsupportedAlg) {
			t.Errorf("alg %q: got %v, want ErrUnsupportedAlg", alg, err)
		}
	}
}

// TestKeyID is upstream's key ID: base64url(SHA-256(PKIX DER)).
func TestKeyID(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	sum := sha256.Sum256(der)
	got, err := KeyID(&k.PublicKey)
	if err != nil || got != base64.RawURLEncoding.EncodeToString(sum[:]) {
		t.Errorf("KeyID: got %q, %v", got, err)
	}
}

// TestParseKeys: every PEM form --service-account-key-file accepts.
func TestParseKeys(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 1024)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pkix, _ := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	tmpl := &x509.Certificate{SerialNumber: bigOne(), NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ecKey.PublicKey, ecKey)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(typ string, b []byte) string { return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b})) }
	bundle := enc("PUBLIC KEY", pkix) + enc("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)) +
		enc("CERTIFICATE", certDER) + enc("EC PRIVATE KEY", ecDER) + enc("PRIVATE KEY", pkcs8) + enc("OTHER", []byte("x"))
	keys, err := ParsePublicKeys([]byte(bundle))
	if err != nil || len(keys) != 5 {
		t.Fatalf("ParsePublicKeys: got %d keys, %v; want 5", len(keys), err)
	}
	if _, err := ParsePublicKeys([]byte("no pem")); err == nil {
		t.Error("ParsePublicKeys of no PEM: want an error")
	}
	if _, err := ParsePublicKeys([]byte(enc("PUBLIC KEY", []byte("junk")))); err == nil {
		t.Error("ParsePublicKeys of a junk key: want an error")
	}
	for _, priv := range []string{enc("EC PRIVATE KEY", ecDER), enc("PRIVATE KEY", pkcs8), enc("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey))} {
		if _, err := ParsePrivateKey([]byte(priv)); err != nil {
			t.Errorf("ParsePrivateKey: %v", err)
		}
	}
	if _, err := ParsePrivateKey([]byte(enc("PUBLIC KEY", pkix))); err == nil {
		t.Error("ParsePrivateKey of a public key: want an error")
	}
}

// TestEnsureGeneratedKey: generated once, then read back.
func TestEnsureGeneratedKey(t *testing.T) {
	dir := t.TempDir()
	k1, path, err := EnsureGeneratedKey(dir)
	if err != nil || !strings.HasSuffix(path, GeneratedKeyFile) {
		t.Fatalf("EnsureGeneratedKey: %q, %v", path, err)
	}
	k2, _, err := EnsureGeneratedKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	id1, _ := KeyID(k1.Public())
	id2, _ := KeyID(k2.Public())
	if id1 != id2 {
		t.Error("the key was generated again")
	}
	pubs, err := LoadPublicKeyFiles([]string{dir + "/" + GeneratedPublicKeyFile})
	if err != nil || len(pubs) != 1 {
		t.Fatalf("public half: %v", err)
	}
	if id, _ := KeyID(pubs[0]); id != id1 {
		t.Error("the public file does not hold the key's public half")
	}
}

// objects is a Getter over maps.
type objects struct {
	sas     map[string]*corev1.ServiceAccount
	secrets map[string]*corev1.Secret
	pods    map[string]*corev1.Pod
	nodes   map[string]*corev1.Node
}

func notFound(res, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: res}, name)
}

func (o *objects) GetServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	if v, ok := o.sas[ns+"/"+name]; ok {
		return v, nil
	}
	return nil, notFound("serviceaccounts", name)
}

func (o *objects) GetSecret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if v, ok := o.secrets[ns+"/"+name]; ok {
		return v, nil
	}
	return nil, notFound("secrets", name)
}

func (o *objects) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if v, ok := o.pods[ns+"/"+name]; ok {
		return v, nil
	}
	return nil, notFound("pods", name)
}

func (o *objects) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	if v, ok := o.nodes[name]; ok {
		return v, nil
	}
	return nil, notFound("nodes", name)
}

func meta(ns, name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}
}

// TestAuthenticator covers the checks of upstream's JWT authenticator and
// validators (pkg/serviceaccount/jwt.go, claims.go, legacy.go), with their
// messages.
func TestAuthenticator(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer := mustSigner(t, key)
	now := time.Unix(1_800_000_000, 0)
	issuer := &Issuer{signer: signer, issuer: "https://iss", now: func() time.Time { return now }}
	sa := &corev1.ServiceAccount{ObjectMeta: meta("ns", "sa", "sa-uid")}
	secret := &corev1.Secret{ObjectMeta: meta("ns", "s", "s-uid")}
	pod := &corev1.Pod{ObjectMeta: meta("ns", "p", "p-uid")}
	node := &corev1.Node{ObjectMeta: meta("", "n", "n-uid")}
	objs := &objects{
		sas:     map[string]*corev1.ServiceAccount{"ns/sa": sa},
		secrets: map[string]*corev1.Secret{"ns/s": secret},
		pods:    map[string]*corev1.Pod{"ns/p": pod},
		nodes:   map[string]*corev1.Node{"n": node},
	}
	a := NewAuthenticator([]string{"https://iss", "https://old"}, true, []crypto.PublicKey{signer.Public()}, []string{"api"}, objs)
	a.now = func() time.Time { return now }
	issue := func(b BoundToken) string {
		t.Helper()
		b.ServiceAccount = sa
		if b.Audiences == nil {
			b.Audiences = []string{"api"}
		}
		if b.Expiration == 0 {
			b.Expiration = time.Hour
		}
		tok, _, err := issuer.Issue(b)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	legacySecret := &corev1.Secret{ObjectMeta: meta("ns", "legacy", "l-uid"), Data: map[string][]byte{}}
	legacy, err := issuer.IssueLegacy(sa, legacySecret)
	if err != nil {
		t.Fatal(err)
	}
	legacySecret.Data[corev1.ServiceAccountTokenKey] = []byte(legacy)
	objs.secrets["ns/legacy"] = legacySecret
	oldIssuer := &Issuer{signer: signer, issuer: "https://old", now: issuer.now}

	plain := issue(BoundToken{})
	tests := []struct {
		name     string
		token    string
		at       time.Duration
		auds     []string
		wantUser string
		wantAuds []string
		wantErr  string
		noOp     bool
	}{
		{name: "bound", token: plain, wantUser: "system:serviceaccount:ns:sa", wantAuds: []string{"api"}},
		{name: "second issuer accepted", token: func() string {
			tok, _, _ := oldIssuer.Issue(BoundToken{ServiceAccount: sa, Audiences: []string{"api"}, Expiration: time.Hour})
			return tok
		}(), wantUser: "system:serviceaccount:ns:sa", wantAuds: []string{"api"}},
		{name: "legacy", token: legacy, wantUser: "system:serviceaccount:ns:sa", wantAuds: []string{"api"}},
		{name: "within the leeway after expiry", token: plain, at: time.Hour + 59*time.Second, wantUser: "system:serviceaccount:ns:sa", wantAuds: []string{"api"}},
		{name: "expired", token: plain, at: time.Hour + 61*time.Second, wantErr: "service account token has expired"},
		{name: "not yet valid", token: plain, at: -2 * time.Minute, wantErr: "service account token could not be validated"},
		{name: "audience asked for", token: issue(BoundToken{Audiences: []string{"vault", "api"}}), auds: []string{"vault"}, wantUser: "system:serviceaccount:ns:sa", wantAuds: []string{"vault"}},
		{name: "audience not in the token", token: plain, auds: []string{"vault"}, wantErr: `token audiences ["api"] is invalid for the target audiences ["vault"]`},
		{name: "another issuer: no opinion", token: func() string {
			tok, _, _ := (&Issuer{signer: signer, issuer: "https://else", now: issuer.now}).Issue(BoundToken{ServiceAccount: sa, Audiences: []string{"api"}, Expiration: time.Hour})
			return tok
		}(), noOp: true},
		{name: "not a JWT: no opinion", token: "abc", noOp: true},
		{name: "secret bound", token: issue(BoundToken{Secret: secret}), wantUser: "system:serviceaccount:ns:sa", wantAuds: []string{"api"}},
		{name: "secret gone", token: issue(BoundToken{Secret: &corev1.Secret{ObjectMeta: meta("ns", "gone", "g")}}), wantErr: `secrets "gone" not found`},
		{name: "secret replaced", token: issue(BoundToken{Secret: &corev1.Secret{ObjectMeta: meta("ns", "s", "old-uid")}}), wantErr: "secret UID (s-uid) does not match service account secret ref claim (old-uid)"},
		{name: "pod replaced", token: issue(BoundToken{Pod: &corev1.Pod{ObjectMeta: meta("ns", "p", "old-uid")}}), wantErr: "pod UID (p-uid) does not match service account pod ref claim (old-uid)"},
		{name: "node replaced", token: issue(BoundToken{Node: &corev1.Node{ObjectMeta: meta("", "n", "old-uid")}}), wantErr: "node UID (n-uid) does not match service account node ref claim (old-uid)"},
		{name: "pod token with a gone node: node only reported", token: issue(BoundToken{Pod: pod, Node: &corev1.Node{ObjectMeta: meta("", "gone", "")}}), wantUser: "system:serviceaccount:ns:sa", wantAuds: []string{"api"}},
		{name: "service account replaced", token: func() string {
			other := sa.DeepCopy()
			other.UID = "old"
			tok, _, _ := issuer.Issue(BoundToken{ServiceAccount: other, Audiences: []string{"api"}, Expiration: time.Hour})
			return tok
		}(), wantErr: "service account UID (sa-uid) does not match claim (old)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.now = func() time.Time { return now.Add(tt.at) }
			ctx := context.Background()
			if tt.auds != nil {
				ctx = authenticator.WithAudiences(ctx, tt.auds)
			}
			u, auds, ok, err := a.AuthenticateToken(ctx, tt.token)
			if tt.noOp {
				if ok || err != nil {
					t.Fatalf("got %v %v, want no opinion", ok, err)
				}
				return
			}
			if tt.wantErr != "" {
				if ok || err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got ok=%v err=%v, want error %q", ok, err, tt.wantErr)
				}
				return
			}
			if !ok || err != nil || u.Name != tt.wantUser || strings.Join(auds, ",") != strings.Join(tt.wantAuds, ",") {
				t.Fatalf("got %+v %q %v %v, want %s %q", u, auds, ok, err, tt.wantUser, tt.wantAuds)
			}
		})
	}

	// A legacy token no longer in its secret, or with the secret gone.
	a.now = func() time.Time { return now }
	legacySecret.Data[corev1.ServiceAccountTokenKey] = []byte("rotated")
	if _, _, ok, err := a.AuthenticateToken(context.Background(), legacy); ok || err == nil || err.Error() != "token does not match server's copy" {
		t.Errorf("legacy token not in its secret: got %v %v", ok, err)
	}
	delete(objs.secrets, "ns/legacy")
	if _, _, ok, err := a.AuthenticateToken(context.Background(), legacy); ok || err == nil || err.Error() != "token has been invalidated" {
		t.Errorf("legacy token of a deleted secret: got %v %v", ok, err)
	}
	// A pod-bound token's user carries the pod and node.
	u, _, ok, err := a.AuthenticateToken(context.Background(), issue(BoundToken{Pod: pod, Node: node}))
	if !ok || err != nil || u.Extra[ExtraPodName][0] != "p" || u.Extra[ExtraPodUID][0] != "p-uid" || u.Extra[ExtraNodeName][0] != "n" || u.Extra[ExtraNodeUID][0] != "n-uid" || u.UID != "sa-uid" {
		t.Errorf("pod-bound user: got %+v %v %v", u, ok, err)
	}
}

func bigOne() *big.Int { return big.NewInt(1) }
