package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
)

// Paths of service-account issuer discovery.
const (
	OpenIDConfigurationPath = "/.well-known/openid-configuration"
	JWKSPath                = "/openid/v1/jwks"
)

// discoveryCacheControl is upstream's: the documents change only when the
// keys do, which takes a restart.
const discoveryCacheControl = "public, max-age=3600"

// Discovery holds the two documents of issuer discovery, built once.
type Discovery struct {
	config []byte
	jwks   []byte
}

type openIDMetadata struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

type jwk struct {
	Use string `json:"use"`
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
}

// NewDiscovery builds the documents of issuer (which must be an https URL,
// as upstream requires for discovery), publishing keys; jwksURI, if empty,
// is the issuer's origin with JWKSPath (--service-account-jwks-uri).
func NewDiscovery(issuer, jwksURI string, keys []crypto.PublicKey) (*Discovery, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("service account issuer %q is not an https URL; discovery is not served", issuer)
	}
	if jwksURI == "" {
		jwksURI = (&url.URL{Scheme: "https", Host: u.Host, Path: JWKSPath}).String()
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	set.Keys = []jwk{}
	var algs []string
	for _, k := range keys {
		j, err := toJWK(k)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(set.Keys, func(o jwk) bool { return o.Kid == j.Kid }) {
			continue
		}
		set.Keys = append(set.Keys, j)
		if !slices.Contains(algs, j.Alg) {
			algs = append(algs, j.Alg)
		}
	}
	slices.Sort(algs)
	if len(algs) == 0 {
		return nil, errors.New("no public keys to publish")
	}
	d := &Discovery{}
	if d.config, err = json.Marshal(openIDMetadata{
		Issuer:        issuer,
		JWKSURI:       jwksURI,
		ResponseTypes: []string{"id_token"},
		SubjectTypes:  []string{"public"},
		SigningAlgs:   algs,
	}); err != nil {
		return nil, err
	}
	if d.jwks, err = json.Marshal(set); err != nil {
		return nil, err
	}
	return d, nil
}

func toJWK(k crypto.PublicKey) (jwk, error) {
	kid, err := KeyID(k)
	if err != nil {
		return jwk{}, err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	switch k := k.(type) {
	case *rsa.PublicKey:
		return jwk{Use: "sig", Kty: "RSA", Kid: kid, Alg: "RS256", N: b64(k.N.Bytes()), E: b64(big.NewInt(int64(k.E)).Bytes())}, nil
	case *ecdsa.PublicKey:
		size := (k.Curve.Params().BitSize + 7) / 8
		ecdh, err := k.ECDH()
		if err != nil {
			return jwk{}, err
		}
		raw := ecdh.Bytes() // 0x04 || X || Y
		return jwk{Use: "sig", Kty: "EC", Kid: kid, Alg: ecAlg(k), Crv: k.Curve.Params().Name,
			X: b64(raw[1 : 1+size]), Y: b64(raw[1+size:])}, nil
	}
	return jwk{}, fmt.Errorf("unsupported public key type %T", k)
}

// ConfigurationHandler serves the OpenID configuration document.
func (d *Discovery) ConfigurationHandler() http.Handler {
	return serveDoc(d.config, "application/json")
}

// JWKSHandler serves the key set.
func (d *Discovery) JWKSHandler() http.Handler {
	return serveDoc(d.jwks, "application/jwk-set+json")
}

func serveDoc(body []byte, contentType string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", discoveryCacheControl)
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}
