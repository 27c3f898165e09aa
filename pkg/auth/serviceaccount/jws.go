package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Errors of JWS parsing and verification. Their texts reach logs and
// TokenReview status.error only; the client sees 401 Unauthorized.
var (
	ErrMalformed        = errors.New("malformed JWT")
	ErrUnsupportedAlg   = errors.New("unsupported signing algorithm")
	ErrInvalidSignature = errors.New("error in cryptographic primitive")
)

// header is the protected header of a JWS.
type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid,omitempty"`
	Typ string `json:"typ,omitempty"`
}

// maxTokenLen bounds what is parsed: larger bearer tokens are not JWTs
// kapi would issue, and decoding them would only cost memory.
const maxTokenLen = 64 << 10

// parsed is a JWS split into its parts, its signature not yet checked.
type parsed struct {
	header    header
	payload   []byte
	signed    string // base64url(header) "." base64url(payload)
	signature []byte
}

// parseJWS splits a compact JWS. It checks the shape only.
func parseJWS(token string) (*parsed, error) {
	if len(token) > maxTokenLen {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxTokenLen)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: compact JWS format must have three parts", ErrMalformed)
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrMalformed, err)
	}
	var h header
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrMalformed, err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("%w: payload: %w", ErrMalformed, err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("%w: signature: %w", ErrMalformed, err)
	}
	return &parsed{header: h, payload: payload, signed: parts[0] + "." + parts[1], signature: sig}, nil
}

// unverifiedPayload returns the decoded payload of a compact JWS without
// checking anything but its shape (used to route a token by issuer).
func unverifiedPayload(token string) ([]byte, bool) {
	if len(token) > maxTokenLen || strings.Count(token, ".") != 2 {
		return nil, false
	}
	_, rest, _ := strings.Cut(token, ".")
	body, _, _ := strings.Cut(rest, ".")
	b, err := base64.RawURLEncoding.DecodeString(body)
	return b, err == nil
}

// algHash is the hash of a JWS algorithm.
func algHash(alg string) (crypto.Hash, bool) {
	switch alg {
	case "RS256", "PS256", "ES256":
		return crypto.SHA256, true
	case "RS384", "PS384", "ES384":
		return crypto.SHA384, true
	case "RS512", "PS512", "ES512":
		return crypto.SHA512, true
	}
	return 0, false
}

// verify checks p's signature with key under p's algorithm, which must fit
// the key's type (RS*/PS* for RSA, ES* with the curve's size for ECDSA).
func (p *parsed) verify(key crypto.PublicKey) error {
	h, ok := algHash(p.header.Alg)
	if !ok {
		return fmt.Errorf("%w %q", ErrUnsupportedAlg, p.header.Alg)
	}
	hasher := h.New()
	hasher.Write([]byte(p.signed))
	digest := hasher.Sum(nil)
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch p.header.Alg[:2] {
		case "RS":
			if rsa.VerifyPKCS1v15(k, h, digest, p.signature) != nil {
				return ErrInvalidSignature
			}
			return nil
		case "PS":
			if rsa.VerifyPSS(k, h, digest, p.signature, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) != nil {
				return ErrInvalidSignature
			}
			return nil
		}
	case *ecdsa.PublicKey:
		if p.header.Alg[:2] != "ES" || ecAlg(k) != p.header.Alg {
			break
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		if len(p.signature) != 2*size {
			return ErrInvalidSignature
		}
		r := new(big.Int).SetBytes(p.signature[:size])
		s := new(big.Int).SetBytes(p.signature[size:])
		if !ecdsa.Verify(k, digest, r, s) {
			return ErrInvalidSignature
		}
		return nil
	}
	return fmt.Errorf("%w: algorithm %q does not fit a %T key", ErrInvalidSignature, p.header.Alg, key)
}

// ecAlg is the ES algorithm of an ECDSA key's curve, "" for other curves.
func ecAlg(k *ecdsa.PublicKey) string {
	switch k.Curve.Params().BitSize {
	case 256:
		return "ES256"
	case 384:
		return "ES384"
	case 521:
		return "ES512"
	}
	return ""
}

// Signer signs JWTs with one private key: RS256 for an RSA key, ES256,
// ES384 or ES512 for an ECDSA key of the matching curve (the algorithms
// upstream's token generator picks).
type Signer struct {
	key crypto.Signer
	alg string
	kid string
}

// NewSigner returns a signer of key, an *rsa.PrivateKey or an
// *ecdsa.PrivateKey on P-256, P-384 or P-521.
func NewSigner(key crypto.Signer) (*Signer, error) {
	s := &Signer{key: key}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		s.alg = "RS256"
	case *ecdsa.PrivateKey:
		s.alg = ecAlg(&k.PublicKey)
		if s.alg == "" {
			return nil, fmt.Errorf("unsupported ECDSA curve %s", k.Curve.Params().Name)
		}
	default:
		return nil, fmt.Errorf("unsupported signing key type %T", key)
	}
	kid, err := KeyID(key.Public())
	if err != nil {
		return nil, err
	}
	s.kid = kid
	return s, nil
}

// Algorithm is the JWS algorithm the signer uses.
func (s *Signer) Algorithm() string { return s.alg }

// Public is the signer's public key.
func (s *Signer) Public() crypto.PublicKey { return s.key.Public() }

// Sign returns the compact JWS of claims (marshalled as JSON) with the
// header {"alg", "kid"}, as upstream's tokens carry.
func (s *Signer) Sign(claims any) (string, error) {
	hb, err := json.Marshal(header{Alg: s.alg, Kid: s.kid})
	if err != nil {
		return "", err
	}
	pb, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("marshal claims: %w", err)
	}
	signed := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(pb)
	h, _ := algHash(s.alg)
	hasher := h.New()
	hasher.Write([]byte(signed))
	digest := hasher.Sum(nil)
	var sig []byte
	switch k := s.key.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, h, digest)
	case *ecdsa.PrivateKey:
		var r, ss *big.Int
		r, ss, err = ecdsa.Sign(rand.Reader, k, digest)
		if err == nil {
			size := (k.Curve.Params().BitSize + 7) / 8
			sig = make([]byte, 2*size)
			r.FillBytes(sig[:size])
			ss.FillBytes(sig[size:])
		}
	}
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// KeyID is upstream's key ID of a public key: the unpadded base64url of the
// SHA-256 of its PKIX DER encoding.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("key id: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// JWS is a compact JWS parsed but not verified, for other JWT
// authenticators (OIDC) to verify with their own keys.
type JWS struct{ p *parsed }

// ParseJWS parses a compact JWS (shape only).
func ParseJWS(token string) (*JWS, error) {
	p, err := parseJWS(token)
	if err != nil {
		return nil, err
	}
	return &JWS{p: p}, nil
}

// Algorithm is the header's alg.
func (j *JWS) Algorithm() string { return j.p.header.Alg }

// KeyID is the header's kid.
func (j *JWS) KeyID() string { return j.p.header.Kid }

// Payload is the unverified payload.
func (j *JWS) Payload() []byte { return j.p.payload }

// Verify checks the signature with key (RS*, PS* or ES* matching the key).
func (j *JWS) Verify(key crypto.PublicKey) error { return j.p.verify(key) }

// UnverifiedPayload returns the payload of a compact JWS without checking
// anything but its shape.
func UnverifiedPayload(token string) ([]byte, bool) { return unverifiedPayload(token) }
