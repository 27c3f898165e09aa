package authenticator

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	kubeasn1 "k8s.io/apimachinery/pkg/apis/asn1"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// NewX509 authenticates requests by their TLS client certificate, verified
// against pool for client authentication. Further certificates the client
// sent are used as intermediates. As upstream's CommonNameUserConversion
// (k8s.io/apiserver v0.37 request/x509), the user is the subject's common
// name, its UID the subject's Kubernetes UID attribute (OID 1.3.6.1.4.1.57683.2,
// AllowParsingUserUIDFromCertAuth: beta and on since v1.33), the groups its
// organizations plus system:authenticated, and the extra
// authentication.kubernetes.io/credential-id "X509SHA256=<leaf's SHA-256>".
// A request without a client certificate gets no opinion; a certificate
// that does not verify is an error. A nil pool gives no opinion on every
// request.
func NewX509(pool *x509.CertPool) Request {
	return &x509Authenticator{verifier: NewClientCertVerifier(pool), now: time.Now}
}

type x509Authenticator struct {
	verifier *ClientCertVerifier
	now      func() time.Time

	// identities keeps what a verified leaf certificate names, by the
	// certificate (one parsed object per TLS connection, sent again with
	// each of its requests): its digest, UID attribute and groups were
	// computed again on every request. The certificate is verified on
	// every request all the same (verifier).
	mu         sync.Mutex
	identities map[*x509.Certificate]*certIdentity
}

// certIdentity is the user a verified leaf certificate names (ok false:
// none, err: an unusable UID attribute).
type certIdentity struct {
	name, uid string
	groups    []string // the organizations plus system:authenticated
	credID    string
	ok        bool
	err       error
}

// maxCertIdentities bounds x509Authenticator.identities (cleared when
// full, as the verifier's answers).
const maxCertIdentities = 1024

var _ Request = (*x509Authenticator)(nil)

// CredentialIDKey is the user extra naming the credential a request was
// authenticated with (upstream's user.CredentialIDKey).
const CredentialIDKey = "authentication.kubernetes.io/credential-id"

func (a *x509Authenticator) AuthenticateRequest(r *http.Request) (*user.Info, bool, error) {
	if a.verifier.roots == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf, err := a.verifier.Verify(r.TLS.PeerCertificates, a.now())
	if err != nil {
		return nil, false, err
	}
	id := a.identity(leaf)
	if !id.ok {
		return nil, false, id.err
	}
	// What authenticated(&user.Info{...}) returns, built from the kept
	// identity: every request gets its own Info.
	return &user.Info{
		Name:   id.name,
		UID:    id.uid,
		Groups: slices.Clone(id.groups),
		Extra:  map[string][]string{CredentialIDKey: {id.credID}},
	}, true, nil
}

// identity returns what leaf names, computed once per certificate.
func (a *x509Authenticator) identity(leaf *x509.Certificate) *certIdentity {
	a.mu.Lock()
	id := a.identities[leaf]
	a.mu.Unlock()
	if id != nil {
		return id
	}
	id = newCertIdentity(leaf)
	a.mu.Lock()
	if a.identities == nil || len(a.identities) >= maxCertIdentities {
		a.identities = map[*x509.Certificate]*certIdentity{}
	}
	a.identities[leaf] = id
	a.mu.Unlock()
	return id
}

func newCertIdentity(leaf *x509.Certificate) *certIdentity {
	// A verified certificate without a common name names nobody; leave it to
	// the next authenticator, as upstream does.
	if leaf.Subject.CommonName == "" {
		return &certIdentity{}
	}
	uid, err := certificateUID(leaf)
	if err != nil {
		return &certIdentity{err: err}
	}
	fp := sha256.Sum256(leaf.Raw)
	u := authenticated(&user.Info{Name: leaf.Subject.CommonName, UID: uid, Groups: slices.Clone(leaf.Subject.Organization)})
	return &certIdentity{name: u.Name, uid: u.UID, groups: u.Groups, credID: "X509SHA256=" + hex.EncodeToString(fp[:]), ok: true}
}

// certificateUID is the subject's one UID attribute, if any, with
// upstream's errors (parseUIDFromCert).
func certificateUID(c *x509.Certificate) (string, error) {
	var uids []string
	for _, name := range c.Subject.Names {
		if !name.Type.Equal(uidOID) {
			continue
		}
		uid, ok := name.Value.(string)
		if !ok {
			return "", errors.New("unable to parse UID into a string")
		}
		uids = append(uids, uid)
	}
	switch {
	case len(uids) == 0:
		return "", nil
	case len(uids) != 1:
		return "", fmt.Errorf("expected 1 UID, but found multiple: %v", uids)
	case uids[0] == "":
		return "", errors.New("UID cannot be an empty string")
	}
	return uids[0], nil
}

var uidOID = kubeasn1.X509UID()

// VerifyClientCertificate verifies a TLS peer's chain (leaf first, then
// the intermediates it sent) against roots at now, for client
// authentication, and returns the leaf. The error names the certificate
// as upstream does: "verifying certificate SN=..., SKID=..., AKID=...
// failed: <reason>".
func VerifyClientCertificate(peers []*x509.Certificate, roots *x509.CertPool, now time.Time) (*x509.Certificate, error) {
	leaf, _, err := verifyChain(peers, roots, now)
	return leaf, err
}

// verifyChain is VerifyClientCertificate, plus the time range in which its
// answer holds: the latest NotBefore and earliest NotAfter of the verified
// chain (zero when it failed).
func verifyChain(peers []*x509.Certificate, roots *x509.CertPool, now time.Time) (*x509.Certificate, [2]time.Time, error) {
	var valid [2]time.Time
	if len(peers) == 0 || peers[0] == nil {
		return nil, valid, errors.New("verifying certificate failed: nil certificate")
	}
	leaf := peers[0]
	opts := x509.VerifyOptions{
		Roots:       roots,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(peers) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range peers[1:] {
			if c != nil {
				opts.Intermediates.AddCert(c)
			}
		}
	}
	chains, err := leaf.Verify(opts)
	if err != nil {
		return nil, valid, fmt.Errorf("verifying certificate %s failed: %w", certificateID(leaf), err)
	}
	// Every chain Verify found holds at now; the answer holds while one
	// does: from the earliest start to the latest end among chains, each
	// chain valid from its latest NotBefore to its earliest NotAfter. The
	// first chain's range is kept: narrower or equal, so never too long.
	valid[0], valid[1] = leaf.NotBefore, leaf.NotAfter
	for _, c := range chains[0] {
		if c.NotBefore.After(valid[0]) {
			valid[0] = c.NotBefore
		}
		if c.NotAfter.Before(valid[1]) {
			valid[1] = c.NotAfter
		}
	}
	return leaf, valid, nil
}

// ClientCertVerifier verifies client certificate chains against fixed
// roots, keeping each answer for the chain's bytes: a client sends the
// same chain on every request, and a verification (a signature check per
// link) was a quarter of the server's CPU for a GET. kube-apiserver
// verifies on every request (its per-connection cache, kubernetes PR
// 100902, was not merged); the answers here are the same: a verified chain
// is kept only while every certificate in it is valid (NotBefore to
// NotAfter, checked on each use), a failure for failureTTL (a certificate
// not yet valid may become valid), and the roots never change for a
// verifier (a new CA bundle makes a new verifier).
type ClientCertVerifier struct {
	roots *x509.CertPool

	mu      sync.Mutex
	answers map[[sha256.Size]byte]verifyAnswer
	// keys are the digests (chainKey) of the chains seen lately, by the
	// certificates' addresses: a connection's requests share one parsed
	// chain, so its digest is computed once per connection rather than per
	// request (it was ~1.6% of a GET's server CPU, twice per request with
	// the request-header authenticator). A parsed certificate is never
	// changed, so its address stands for its bytes while it is kept here.
	keys map[chainAddrs][sha256.Size]byte
}

// chainAddrs are the addresses of a chain of up to maxKeyedChain
// certificates.
type chainAddrs struct {
	n     int
	certs [maxKeyedChain]*x509.Certificate
}

// maxKeyedChain is the longest chain whose digest is kept by address;
// maxKeyedChains the most digests kept (each keeps its certificates
// alive).
const (
	maxKeyedChain  = 4
	maxKeyedChains = 256
)

type verifyAnswer struct {
	err        error
	from, till time.Time // a verified chain's validity; for a failure, till is its expiry
}

const (
	maxVerifyAnswers = 1024
	failureTTL       = 10 * time.Second
)

// NewClientCertVerifier returns a verifier against roots (nil: no roots).
func NewClientCertVerifier(roots *x509.CertPool) *ClientCertVerifier {
	return &ClientCertVerifier{roots: roots, answers: map[[sha256.Size]byte]verifyAnswer{}, keys: map[chainAddrs][sha256.Size]byte{}}
}

// Verify is [VerifyClientCertificate] against the verifier's roots,
// answered from the kept answers when it can be.
func (v *ClientCertVerifier) Verify(peers []*x509.Certificate, now time.Time) (*x509.Certificate, error) {
	if len(peers) == 0 || peers[0] == nil {
		return VerifyClientCertificate(peers, v.roots, now)
	}
	addrs, byAddr := chainAddrs{n: len(peers)}, len(peers) <= maxKeyedChain
	if byAddr {
		copy(addrs.certs[:], peers)
	}
	var (
		key   [sha256.Size]byte
		known bool
		a     verifyAnswer
		ok    bool
	)
	v.mu.Lock()
	if byAddr {
		if key, known = v.keys[addrs]; known {
			a, ok = v.answers[key]
		}
	}
	v.mu.Unlock()
	if !known {
		key = chainKey(peers)
		v.mu.Lock()
		if byAddr {
			if len(v.keys) >= maxKeyedChains {
				clear(v.keys)
			}
			v.keys[addrs] = key
		}
		a, ok = v.answers[key]
		v.mu.Unlock()
	}
	if ok {
		if a.err != nil && now.Before(a.till) {
			return nil, a.err
		}
		if a.err == nil && !now.Before(a.from) && !now.After(a.till) {
			return peers[0], nil
		}
	}
	leaf, valid, err := verifyChain(peers, v.roots, now)
	a = verifyAnswer{err: err, from: valid[0], till: valid[1]}
	if err != nil {
		a.till = now.Add(failureTTL)
	}
	v.mu.Lock()
	if len(v.answers) >= maxVerifyAnswers {
		clear(v.answers) // many distinct chains: start over rather than grow
	}
	v.answers[key] = a
	v.mu.Unlock()
	return leaf, err
}

// chainKey is a digest of the chain's certificates, each length-prefixed.
func chainKey(peers []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, c := range peers {
		if c == nil {
			continue
		}
		binary.BigEndian.PutUint64(n[:], uint64(len(c.Raw)))
		h.Write(n[:])
		h.Write(c.Raw)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// certificateID names a certificate in errors the way upstream does:
// "SN=<decimal>, SKID=AB:CD:..., AKID=...".
func certificateID(c *x509.Certificate) string {
	return fmt.Sprintf("SN=%d, SKID=%s, AKID=%s", c.SerialNumber, colonHex(c.SubjectKeyId), colonHex(c.AuthorityKeyId))
}

func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i := range b {
		parts[i] = strings.ToUpper(hex.EncodeToString(b[i : i+1]))
	}
	return strings.Join(parts, ":")
}
