package storage

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// continueAPIVersion is the version of the continue token format; tokens
// have kube-apiserver's shape: base64url (unpadded) of
// {"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key after the list prefix>"}.
//
// kube-apiserver writes the start key in one of two forms, by which of its
// layers served the page: its watch cache trims the list's key as the
// registry gives it ("/configmaps/ns1": start "/cm1\u0000"), its etcd3
// store the key's directory ("/configmaps/ns1/": start "cm1\u0000").
// Every resource it caches by default (all but events) has its pages served
// by the watch cache; a compacted token's 410 comes from etcd3. kapi's
// stores and cache write the same form kube-apiserver's layer would for
// the same list (see [ContinuePrefix]).
const continueAPIVersion = "meta.k8s.io/v1"

// ErrInvalidContinue is wrapped by every error of [DecodeContinue].
var ErrInvalidContinue = errors.New("continue key is not valid")

type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// EncodeContinue returns the token that resumes a list under keyPrefix at
// key (a full key under keyPrefix), read at revision rv (-1: at the latest
// revision, the token handed out once the original revision is compacted).
func EncodeContinue(key, keyPrefix string, rv int64) (string, error) {
	start, ok := strings.CutPrefix(key, keyPrefix)
	if !ok || start == "" {
		return "", fmt.Errorf("encode continue token: key %q is not under %q", key, keyPrefix)
	}
	data, err := json.Marshal(continueToken{APIVersion: continueAPIVersion, ResourceVersion: rv, StartKey: start})
	if err != nil {
		return "", fmt.Errorf("encode continue token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// ContinuePrefix returns the prefix a page's continue token trims from
// the start key: the list's key itself when kube-apiserver would serve the
// page from its watch cache (cacheForm), else the key's directory (key +
// "/"), as its etcd3 store does.
func ContinuePrefix(key string, cacheForm bool) string {
	if cacheForm || strings.HasSuffix(key, "/") {
		return key
	}
	return key + "/"
}

// DecodeContinue parses a continue token of a list under keyPrefix and
// returns the full key to resume from and the revision to read at
// (negative: the latest). The start key cannot leave keyPrefix ("..", "//"
// and "." are refused); a leading "/" is dropped, so a token of either
// form (see [ContinuePrefix]) resumes the same list. Every error wraps
// ErrInvalidContinue.
func DecodeContinue(token, keyPrefix string) (fromKey string, rv int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %w", ErrInvalidContinue, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %w", ErrInvalidContinue, err)
	}
	if c.APIVersion != continueAPIVersion {
		return "", 0, fmt.Errorf("%w: server does not recognize this encoded version %s", ErrInvalidContinue, c.APIVersion)
	}
	// Any negative revision means the latest, as kube-apiserver reads it
	// (it issues -1 only).
	if c.ResourceVersion == 0 {
		return "", 0, fmt.Errorf("%w: incorrect encoded start resourceVersion (version %s)", ErrInvalidContinue, continueAPIVersion)
	}
	if c.StartKey == "" {
		return "", 0, fmt.Errorf("%w: encoded start key empty (version %s)", ErrInvalidContinue, continueAPIVersion)
	}
	// Defend against path traversal: a clean start key appended to the
	// prefix cannot range over anything outside it.
	k := c.StartKey
	if !strings.HasPrefix(k, "/") {
		k = "/" + k
	}
	if path.Clean(k) != k {
		return "", 0, fmt.Errorf("%w: %s", ErrInvalidContinue, c.StartKey)
	}
	return keyPrefix + k[1:], c.ResourceVersion, nil
}
