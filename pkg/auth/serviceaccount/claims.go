package serviceaccount

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// LegacyIssuer is the issuer of the tokens of legacy
// kubernetes.io/service-account-token Secrets.
const LegacyIssuer = "kubernetes/serviceaccount"

// ServiceAccountUsernamePrefix starts every service account's user name:
// system:serviceaccount:<namespace>:<name>.
const ServiceAccountUsernamePrefix = "system:serviceaccount:"

// Groups of service accounts.
const (
	AllServiceAccountsGroup = "system:serviceaccounts"
	namespaceGroupPrefix    = "system:serviceaccounts:"
)

// Extra keys of a service account's user (upstream's
// k8s.io/apiserver/pkg/authentication/serviceaccount).
const (
	ExtraPodName      = "authentication.kubernetes.io/pod-name"
	ExtraPodUID       = "authentication.kubernetes.io/pod-uid"
	ExtraNodeName     = "authentication.kubernetes.io/node-name"
	ExtraNodeUID      = "authentication.kubernetes.io/node-uid"
	ExtraCredentialID = "authentication.kubernetes.io/credential-id"
)

// MakeUsername is system:serviceaccount:<namespace>:<name>.
func MakeUsername(namespace, name string) string {
	return ServiceAccountUsernamePrefix + namespace + ":" + name
}

// SplitUsername undoes MakeUsername.
func SplitUsername(username string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(username, ServiceAccountUsernamePrefix)
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	if !ok || namespace == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return namespace, name, true
}

// Ref names an object in the private claims.
type Ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// KubernetesClaims is the "kubernetes.io" private claim of bound tokens
// (upstream pkg/serviceaccount/claims.go).
type KubernetesClaims struct {
	Namespace string       `json:"namespace,omitempty"`
	Svcacct   Ref          `json:"serviceaccount,omitempty"`
	Pod       *Ref         `json:"pod,omitempty"`
	Secret    *Ref         `json:"secret,omitempty"`
	Node      *Ref         `json:"node,omitempty"`
	WarnAfter *NumericDate `json:"warnafter,omitempty"`
}

// Claims are the claims of a service-account token: the registered ones,
// the "kubernetes.io" claim of bound tokens, and the flat claims of legacy
// Secret tokens.
type Claims struct {
	Issuer    string       `json:"iss,omitempty"`
	Subject   string       `json:"sub,omitempty"`
	Audience  Audience     `json:"aud,omitempty"`
	Expiry    *NumericDate `json:"exp,omitempty"`
	NotBefore *NumericDate `json:"nbf,omitempty"`
	IssuedAt  *NumericDate `json:"iat,omitempty"`
	ID        string       `json:"jti,omitempty"`

	Kubernetes *KubernetesClaims `json:"kubernetes.io,omitempty"`

	LegacyNamespace          string `json:"kubernetes.io/serviceaccount/namespace,omitempty"`
	LegacySecretName         string `json:"kubernetes.io/serviceaccount/secret.name,omitempty"`
	LegacyServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name,omitempty"`
	LegacyServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid,omitempty"`
}

// NumericDate is a JWT date: seconds since the epoch, read from an integer
// or a floating-point JSON number.
type NumericDate int64

// NewNumericDate is t in seconds.
func NewNumericDate(t time.Time) *NumericDate {
	d := NumericDate(t.Unix())
	return &d
}

// Time is d as a time.
func (d NumericDate) Time() time.Time { return time.Unix(int64(d), 0) }

// UnmarshalJSON accepts any JSON number in int64 range.
func (d *NumericDate) UnmarshalJSON(b []byte) error {
	var f json.Number
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("numeric date: %w", err)
	}
	if i, err := f.Int64(); err == nil {
		*d = NumericDate(i)
		return nil
	}
	v, err := f.Float64()
	if err != nil || math.IsNaN(v) || v > math.MaxInt64 || v < math.MinInt64 {
		return fmt.Errorf("numeric date %s out of range", f)
	}
	*d = NumericDate(int64(v))
	return nil
}

// Audience is the "aud" claim: one string or an array of strings.
type Audience []string

// MarshalJSON writes an array (as upstream's tokens carry it).
func (a Audience) MarshalJSON() ([]byte, error) { return json.Marshal([]string(a)) }

// UnmarshalJSON reads a string or an array of strings.
func (a *Audience) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = Audience{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("aud: %w", err)
	}
	*a = list
	return nil
}
