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

// DecodeContinue parses a continue token of a list under keyPrefix and
// returns the full key to resume from and the revision to read at (-1: the
// latest). The start key cannot leave keyPrefix ("..", "//" and "." are
// refused). Every error wraps ErrInvalidContinue.
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
		return "", 0, fmt.Errorf("%w: server does not recognize this encoded version %q", ErrInvalidContinue, c.APIVersion)
	}
	if c.ResourceVersion == 0 || c.ResourceVersion < -1 {
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
