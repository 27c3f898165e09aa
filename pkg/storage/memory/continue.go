package memory

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// continueAPIVersion is the version of the continue token format; tokens
// have kube-apiserver's shape so clients see no difference.
const continueAPIVersion = "meta.k8s.io/v1"

// continueToken is the JSON inside a continue token: the revision the first
// page was read at (-1: the latest, after the old one was compacted) and the
// key to resume from, relative to the list's prefix.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

var errInvalidContinue = errors.New("continue key is not valid")

// encodeContinue returns the token resuming a list under prefix at key
// (a full key) read at revision rv.
func encodeContinue(key, prefix string, rv int64) (string, error) {
	start, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return "", fmt.Errorf("encode continue token: key %q is not under %q", key, prefix)
	}
	data, err := json.Marshal(continueToken{APIVersion: continueAPIVersion, ResourceVersion: rv, StartKey: start})
	if err != nil {
		return "", fmt.Errorf("encode continue token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// decodeContinue parses a continue token for a list under prefix and returns
// the full key to resume from and the revision to read at (-1: latest).
// Every error wraps errInvalidContinue.
func decodeContinue(token, prefix string) (fromKey string, rv int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %w", errInvalidContinue, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %w", errInvalidContinue, err)
	}
	if c.APIVersion != continueAPIVersion {
		return "", 0, fmt.Errorf("%w: server does not recognize this encoded version %q", errInvalidContinue, c.APIVersion)
	}
	if c.ResourceVersion == 0 || c.ResourceVersion < -1 {
		return "", 0, fmt.Errorf("%w: incorrect encoded start resourceVersion (version %s)", errInvalidContinue, continueAPIVersion)
	}
	if c.StartKey == "" {
		return "", 0, fmt.Errorf("%w: encoded start key empty (version %s)", errInvalidContinue, continueAPIVersion)
	}
	// The start key must stay inside the prefix: no "..", no "//".
	k := c.StartKey
	if !strings.HasPrefix(k, "/") {
		k = "/" + k
	}
	if path.Clean(k) != k {
		return "", 0, fmt.Errorf("%w: start key %q is not a clean path", errInvalidContinue, c.StartKey)
	}
	return prefix + k[1:], c.ResourceVersion, nil
}
