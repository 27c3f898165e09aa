package serviceaccount

import (
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
)

// Issuer issues service-account tokens under one issuer name.
type Issuer struct {
	signer *Signer
	issuer string
	now    func() time.Time
}

// NewIssuer returns an issuer signing with signer as iss (the first
// --service-account-issuer).
func NewIssuer(signer *Signer, iss string) *Issuer {
	return &Issuer{signer: signer, issuer: iss, now: time.Now}
}

// Name is the iss of the tokens issued.
func (i *Issuer) Name() string { return i.issuer }

// BoundToken describes a TokenRequest's token.
type BoundToken struct {
	ServiceAccount *corev1.ServiceAccount
	// At most one of Pod, Secret and Node binds the token; Node may also
	// accompany Pod (the node the pod runs on, upstream's
	// ServiceAccountTokenPodNodeInfo).
	Pod    *corev1.Pod
	Secret *corev1.Secret
	Node   *corev1.Node
	// Audiences of the token (non-empty).
	Audiences []string
	// Expiration is how long the token is valid.
	Expiration time.Duration
	// WarnAfter, if non-zero, is when a client should be warned about an
	// extended token (--service-account-extend-token-expiration).
	WarnAfter time.Duration
	// ID is the token's jti claim; a new UUID when empty.
	ID string
}

// Issue signs the token b describes and returns it with its expiry.
func (i *Issuer) Issue(b BoundToken) (string, time.Time, error) {
	now := i.now()
	exp := now.Add(b.Expiration)
	sa := b.ServiceAccount
	k := &KubernetesClaims{
		Namespace: sa.Namespace,
		Svcacct:   Ref{Name: sa.Name, UID: string(sa.UID)},
	}
	if b.Pod != nil {
		k.Pod = &Ref{Name: b.Pod.Name, UID: string(b.Pod.UID)}
	}
	if b.Secret != nil {
		k.Secret = &Ref{Name: b.Secret.Name, UID: string(b.Secret.UID)}
	}
	if b.Node != nil {
		k.Node = &Ref{Name: b.Node.Name, UID: string(b.Node.UID)}
	}
	if b.WarnAfter > 0 {
		k.WarnAfter = NewNumericDate(now.Add(b.WarnAfter))
	}
	if b.ID == "" {
		b.ID = uuid.NewString()
	}
	c := Claims{
		Issuer:     i.issuer,
		Subject:    MakeUsername(sa.Namespace, sa.Name),
		Audience:   b.Audiences,
		Expiry:     NewNumericDate(exp),
		NotBefore:  NewNumericDate(now),
		IssuedAt:   NewNumericDate(now),
		ID:         b.ID,
		Kubernetes: k,
	}
	tok, err := i.signer.Sign(c)
	if err != nil {
		return "", time.Time{}, err
	}
	return tok, c.Expiry.Time(), nil
}

// IssueLegacy signs the token of a legacy kubernetes.io/service-account-token
// Secret: issuer LegacyIssuer, no audience, no expiry.
func (i *Issuer) IssueLegacy(sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error) {
	return i.signer.Sign(Claims{
		Issuer:                   LegacyIssuer,
		Subject:                  MakeUsername(sa.Namespace, sa.Name),
		LegacyNamespace:          sa.Namespace,
		LegacySecretName:         secret.Name,
		LegacyServiceAccountName: sa.Name,
		LegacyServiceAccountUID:  string(sa.UID),
	})
}
