package serviceaccount

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Getter reads the objects a token refers to. Errors are returned as they
// are (a NotFound says the object is gone). It must be safe for
// concurrent use.
type Getter interface {
	GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
}

// leeway is go-jose's jwt.DefaultLeeway, which upstream's validation
// uses for exp, nbf, iat and deletion times.
const leeway = time.Minute

// Authenticator authenticates service-account tokens: bound tokens of the
// configured issuers and legacy Secret tokens, signed by one of the keys.
type Authenticator struct {
	issuers      map[string]bool
	keys         []crypto.PublicKey
	implicitAuds []string
	getter       Getter
	now          func() time.Time
}

// NewAuthenticator accepts tokens whose iss is one of issuers (plus
// LegacyIssuer if legacy), signed by one of keys, for the API audiences
// implicitAuds; getter checks that what they name still exists.
func NewAuthenticator(issuers []string, legacy bool, keys []crypto.PublicKey, implicitAuds []string, getter Getter) *Authenticator {
	a := &Authenticator{issuers: map[string]bool{}, keys: keys, implicitAuds: implicitAuds, getter: getter, now: time.Now}
	for _, i := range issuers {
		a.issuers[i] = true
	}
	if legacy {
		a.issuers[LegacyIssuer] = true
	}
	return a
}

// AuthenticateToken returns the service account of a token and the
// audiences it is valid for. A token that is not a JWT of one of its
// issuers gets no opinion (nil, nil, false, nil), as upstream's
// hasCorrectIssuer does; one that is but fails a check is an error.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*user.Info, []string, bool, error) {
	payload, ok := unverifiedPayload(token)
	if !ok {
		return nil, nil, false, nil
	}
	var peek struct {
		Issuer string `json:"iss"`
	}
	if json.Unmarshal(payload, &peek) != nil || !a.issuers[peek.Issuer] {
		return nil, nil, false, nil
	}
	p, err := parseJWS(token)
	if err != nil {
		// Upstream: a token that does not parse gets no opinion.
		return nil, nil, false, nil
	}
	var errs []error
	verified := false
	for _, k := range a.keys {
		if err := p.verify(k); err != nil {
			errs = append(errs, err)
			continue
		}
		verified = true
		break
	}
	if !verified {
		if len(errs) == 0 {
			errs = append(errs, errors.New("no keys to verify the token with"))
		}
		return nil, nil, false, errors.Join(errs...)
	}
	var c Claims
	dec := json.NewDecoder(bytes.NewReader(p.payload))
	if err := dec.Decode(&c); err != nil {
		return nil, nil, false, fmt.Errorf("%w: claims: %w", ErrMalformed, err)
	}
	if !a.issuers[c.Issuer] {
		return nil, nil, false, fmt.Errorf("token issuer %q is invalid", c.Issuer)
	}
	tokenAuds := []string(c.Audience)
	if len(tokenAuds) == 0 {
		// Only the API server's audiences for tokens without any (legacy).
		tokenAuds = a.implicitAuds
	}
	requested, ok := authenticator.AudiencesFrom(ctx)
	if !ok {
		requested = a.implicitAuds
	}
	auds := authenticator.IntersectAudiences(tokenAuds, requested)
	if len(auds) == 0 && len(a.implicitAuds) != 0 {
		return nil, nil, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", tokenAuds, requested)
	}
	var u *user.Info
	// Tokens of the legacy issuer are only ever legacy Secret tokens.
	if c.Issuer == LegacyIssuer {
		u, err = a.validateLegacy(ctx, token, &c)
	} else {
		u, err = a.validateBound(ctx, &c)
	}
	if err != nil {
		return nil, nil, false, err
	}
	return u, auds, true, nil
}

// validateBound is upstream's validator of bound tokens: times, then the
// service account and the bound objects, by name and UID.
func (a *Authenticator) validateBound(ctx context.Context, c *Claims) (*user.Info, error) {
	now := a.now()
	if c.Expiry != nil && now.After(c.Expiry.Time().Add(leeway)) {
		return nil, errors.New("service account token has expired")
	}
	if (c.NotBefore != nil && now.Add(leeway).Before(c.NotBefore.Time())) ||
		(c.IssuedAt != nil && now.Add(leeway).Before(c.IssuedAt.Time())) {
		return nil, errors.New("service account token could not be validated")
	}
	k := c.Kubernetes
	if k == nil {
		return nil, errors.New("service account token claims could not be retrieved")
	}
	if k.Namespace == "" || k.Svcacct.Name == "" {
		return nil, errors.New("service account token does not name a service account")
	}
	deletedBefore := now.Add(-leeway)
	ns := k.Namespace
	sa, err := a.getter.GetServiceAccount(ctx, ns, k.Svcacct.Name)
	if err != nil {
		return nil, err
	}
	if string(sa.UID) != k.Svcacct.UID {
		return nil, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, k.Svcacct.UID)
	}
	if sa.DeletionTimestamp != nil && sa.DeletionTimestamp.Time.Before(deletedBefore) {
		return nil, fmt.Errorf("service account %s/%s has been deleted", ns, k.Svcacct.Name)
	}
	extra := map[string][]string{}
	if k.Secret != nil {
		s, err := a.getter.GetSecret(ctx, ns, k.Secret.Name)
		if err != nil {
			return nil, err
		}
		if s.DeletionTimestamp != nil && s.DeletionTimestamp.Time.Before(deletedBefore) {
			return nil, fmt.Errorf("secret %s/%s has been deleted", ns, k.Secret.Name)
		}
		if string(s.UID) != k.Secret.UID {
			return nil, fmt.Errorf("secret UID (%s) does not match service account secret ref claim (%s)", s.UID, k.Secret.UID)
		}
	}
	if k.Pod != nil {
		p, err := a.getter.GetPod(ctx, ns, k.Pod.Name)
		if err != nil {
			return nil, err
		}
		if p.DeletionTimestamp != nil && p.DeletionTimestamp.Time.Before(deletedBefore) {
			return nil, fmt.Errorf("pod %s/%s has been deleted", ns, k.Pod.Name)
		}
		if string(p.UID) != k.Pod.UID {
			return nil, fmt.Errorf("pod UID (%s) does not match service account pod ref claim (%s)", p.UID, k.Pod.UID)
		}
		extra[ExtraPodName] = []string{k.Pod.Name}
		extra[ExtraPodUID] = []string{k.Pod.UID}
	}
	if k.Node != nil {
		if k.Pod == nil {
			// A node-bound token: the node must still be there.
			n, err := a.getter.GetNode(ctx, k.Node.Name)
			if err != nil {
				return nil, err
			}
			if n.DeletionTimestamp != nil && n.DeletionTimestamp.Time.Before(deletedBefore) {
				return nil, fmt.Errorf("node %s has been deleted", k.Node.Name)
			}
			if string(n.UID) != k.Node.UID {
				return nil, fmt.Errorf("node UID (%s) does not match service account node ref claim (%s)", n.UID, k.Node.UID)
			}
		}
		// For a pod-bound token the node claims are only reported.
		extra[ExtraNodeName] = []string{k.Node.Name}
		extra[ExtraNodeUID] = []string{k.Node.UID}
	}
	if c.ID != "" {
		extra[ExtraCredentialID] = []string{CredentialIDForJTI(c.ID)}
	}
	return userOf(ns, sa.Name, string(sa.UID), extra), nil
}

// validateLegacy is upstream's validator of legacy Secret tokens: the
// Secret must still hold exactly this token, and the service account must
// be the one named, by UID.
func (a *Authenticator) validateLegacy(ctx context.Context, token string, c *Claims) (*user.Info, error) {
	ns, secretName, saName, saUID := c.LegacyNamespace, c.LegacySecretName, c.LegacyServiceAccountName, c.LegacyServiceAccountUID
	if ns == "" || secretName == "" || saName == "" || saUID == "" {
		return nil, errors.New("service account token claims are incomplete")
	}
	if c.Subject != MakeUsername(ns, saName) {
		return nil, errors.New("sub claim does not match the service account")
	}
	s, err := a.getter.GetSecret(ctx, ns, secretName)
	if err != nil || s.DeletionTimestamp != nil {
		return nil, errors.New("token has been invalidated")
	}
	if !bytes.Equal(s.Data[corev1.ServiceAccountTokenKey], []byte(token)) {
		return nil, errors.New("token does not match server's copy")
	}
	sa, err := a.getter.GetServiceAccount(ctx, ns, saName)
	if err != nil {
		return nil, err
	}
	if sa.DeletionTimestamp != nil {
		return nil, fmt.Errorf("service account %s/%s has been deleted", ns, saName)
	}
	if string(sa.UID) != saUID {
		return nil, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, saUID)
	}
	return userOf(ns, saName, saUID, nil), nil
}

// userOf is the user of a service account (upstream's
// ServiceAccountInfo.UserInfo), in system:authenticated too.
func userOf(ns, name, uid string, extra map[string][]string) *user.Info {
	if len(extra) == 0 {
		extra = nil
	}
	return &user.Info{
		Name:   MakeUsername(ns, name),
		UID:    uid,
		Groups: []string{AllServiceAccountsGroup, namespaceGroupPrefix + ns, user.AllAuthenticated},
		Extra:  extra,
	}
}

// CredentialIDForJTI is the credential ID of a token with that jti, as the
// credential-id user extra and the issued-credential-id audit annotation
// name it: "JTI=<jti>".
func CredentialIDForJTI(jti string) string { return "JTI=" + jti }
