package serviceaccount

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// FuzzAuthenticateToken feeds arbitrary bearer tokens to the
// service-account token authenticator: it must never panic, and must never
// accept a token it did not sign. The seeds are the defects of the
// bad-credential table (alg none, other algorithms, swapped parts,
// truncation, bad base64 and JSON) and a valid token.
func FuzzAuthenticateToken(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer := mustSigner(f, key)
	sa := &corev1.ServiceAccount{ObjectMeta: meta("ns", "sa", "uid")}
	objs := &objects{sas: map[string]*corev1.ServiceAccount{"ns/sa": sa}}
	issuer := NewIssuer(signer, "https://iss")
	good, _, err := issuer.Issue(BoundToken{ServiceAccount: sa, Audiences: []string{"api"}, Expiration: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	a := NewAuthenticator([]string{"https://iss"}, true, []crypto.PublicKey{signer.Public()}, []string{"api"}, objs)
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	payload := b64(`{"iss":"https://iss","aud":["api"],"exp":99999999999,"kubernetes.io":{"namespace":"ns","serviceaccount":{"name":"sa","uid":"uid"}}}`)
	for _, seed := range []string{
		good,
		good[:len(good)-4],
		b64(`{"alg":"none"}`) + "." + payload + ".",
		b64(`{"alg":"HS256"}`) + "." + payload + "." + b64("sig"),
		b64(`{"alg":"RS256"}`) + "." + payload + "." + b64("sig"),
		b64(`{"alg":"ES256"}`) + "." + payload + "." + b64(string(make([]byte, 64))),
		b64(`{"alg":"ES256"}`) + "." + b64(`{"iss":"https://iss","exp":1e400}`) + "." + b64("x"),
		b64(`{"alg":"ES256"}`) + "." + b64(`{"iss":"kubernetes/serviceaccount"}`) + "." + b64("x"),
		"..",
		"a.b.c",
		b64("{") + "." + b64("{") + "." + b64("{"),
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		u, _, ok, err := a.AuthenticateToken(context.Background(), token)
		if ok && (err != nil || u == nil) {
			t.Fatalf("ok with err=%v user=%v", err, u)
		}
		if ok && token != good {
			// Only a token carrying a valid signature of the key may pass:
			// ES256 signatures are malleable only by re-signing.
			p, perr := parseJWS(token)
			if perr != nil || p.verify(signer.Public()) != nil {
				t.Fatalf("accepted a token that does not verify: %q", token)
			}
		}
	})
}
