package certificates

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"

	certvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/certificates"
)

// DefaultSigningDuration is kube-controller-manager's
// --cluster-signing-duration default (one year).
const DefaultSigningDuration = 8760 * time.Hour

// minDuration is the shortest certificate issued, whatever
// spec.expirationSeconds asks (twice the backdate).
const minDuration = 10 * time.Minute

// Backdating as upstream's signer: notBefore 5 minutes in the past, and for
// certificates shorter than 8 hours the 5 minutes are added to the
// lifetime so the certificate still lasts what was asked from now.
const (
	backdate = 5 * time.Minute
	short    = 8 * time.Hour
)

// SignerConfig is the signer's CA and default duration.
type SignerConfig struct {
	CA  *x509.Certificate
	Key crypto.Signer
	// Signers, if not nil, are the CAs by signer name
	// (--cluster-signing-*-file, see LoadSigners), replacing CA and Key:
	// requests for a signer not in it are left alone (as
	// kube-controller-manager runs no signing loop for a signer given no
	// files).
	Signers map[string]CA
	// Duration is the longest (and default) certificate lifetime
	// (--cluster-signing-duration); 0 means [DefaultSigningDuration].
	Duration time.Duration
	Logger   *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Signer signs approved CSRs of the kubernetes.io signers with the CA.
type Signer struct {
	cfg    SignerConfig
	client kubernetes.Interface
}

// NewSigner returns the csrsigning controller.
func NewSigner(client kubernetes.Interface, csrs certinformers.CertificateSigningRequestInformer, cfg SignerConfig) (*Controller, error) {
	if cfg.Signers == nil && (cfg.CA == nil || cfg.Key == nil) {
		return nil, errors.New("csr signer: a CA certificate and key are required")
	}
	for name, ca := range cfg.Signers {
		if ca.Cert == nil || ca.Key == nil {
			return nil, fmt.Errorf("csr signer: signer %q: a CA certificate and key are required", name)
		}
	}
	if cfg.Duration <= 0 {
		cfg.Duration = DefaultSigningDuration
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Signer{cfg: cfg, client: client}
	return newController("csrsigning", client, csrs, cfg.Logger, 0, s.handle, true)
}

// signerChecks are the restrictions of the signers kube-controller-manager
// implements, by signer name (upstream's getCSRVerificationFuncForSignerName).
var signerChecks = map[string]func(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error{
	certificatesv1.KubeAPIServerClientSignerName:        checkAPIServerClient,
	certificatesv1.KubeAPIServerClientKubeletSignerName: CheckKubeletClient,
	certificatesv1.KubeletServingSignerName:             checkKubeletServing,
	// No restriction for the legacy signer (upstream keeps v1beta1's
	// behaviour); v1 refuses to create such requests anyway.
	certvalidation.LegacyUnknownSignerName: func(*x509.CertificateRequest, []certificatesv1.KeyUsage) error { return nil },
}

func (s *Signer) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if len(csr.Status.Certificate) > 0 || !IsApproved(csr) || hasTrue(csr, certificatesv1.CertificateFailed) {
		return nil
	}
	check, ok := signerChecks[csr.Spec.SignerName]
	if !ok {
		return nil
	}
	ca := CA{Cert: s.cfg.CA, Key: s.cfg.Key}
	if s.cfg.Signers != nil {
		if ca, ok = s.cfg.Signers[csr.Spec.SignerName]; !ok {
			return nil
		}
	}
	req, err := certvalidation.ParseCSR(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %w", csr.Name, err)
	}
	if err := check(req, csr.Spec.Usages); err != nil {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type:           certificatesv1.CertificateFailed,
			Status:         corev1.ConditionTrue,
			Reason:         "SignerValidationFailure",
			Message:        err.Error(),
			LastUpdateTime: metav1.NewTime(s.cfg.Now()),
		})
		if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("error adding failure condition for csr: %w", err)
		}
		return nil
	}
	cert, err := s.sign(ca, req, csr.Spec.Usages, csr.Spec.ExpirationSeconds)
	if err != nil {
		return fmt.Errorf("error auto signing csr: %w", err)
	}
	csr.Status.Certificate = cert
	if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("error updating signature for csr: %w", err)
	}
	return nil
}

// duration is the lifetime of a certificate: expirationSeconds if set,
// within [minDuration, the configured duration].
func (s *Signer) duration(expirationSeconds *int32) time.Duration {
	if expirationSeconds == nil {
		return s.cfg.Duration
	}
	d := time.Duration(*expirationSeconds) * time.Second
	return max(minDuration, min(d, s.cfg.Duration))
}

// Sign issues the PEM certificate of req for usages (upstream's
// PermissiveSigningPolicy): the request's subject and SANs, the usages
// asked, no other extension, not a CA, never past the CA's expiry.
func (s *Signer) Sign(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, expirationSeconds *int32) ([]byte, error) {
	return s.sign(CA{Cert: s.cfg.CA, Key: s.cfg.Key}, req, usages, expirationSeconds)
}

// sign is Sign with the CA ca.
func (s *Signer) sign(ca CA, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, expirationSeconds *int32) ([]byte, error) {
	if ca.Cert == nil || ca.Key == nil {
		return nil, errors.New("csr signer: no CA to sign with")
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("unable to verify certificate request signature: %w", err)
	}
	keyUsage, extUsages, err := KeyUsages(usages)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("unable to generate a serial number for %s: %w", req.Subject.CommonName, err)
	}
	now := s.cfg.Now()
	ttl := s.duration(expirationSeconds)
	notBefore := now.Add(-backdate)
	notAfter := notBefore.Add(ttl)
	if ttl < short {
		notAfter = now.Add(ttl)
	}
	caEnd := ca.Cert.NotAfter
	if !now.Before(caEnd) {
		return nil, fmt.Errorf("the signer has expired: NotAfter=%v", caEnd)
	}
	if notAfter.After(caEnd) {
		notAfter = caEnd
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               req.Subject,
		DNSNames:              req.DNSNames,
		IPAddresses:           req.IPAddresses,
		EmailAddresses:        req.EmailAddresses,
		URIs:                  req.URIs,
		PublicKeyAlgorithm:    req.PublicKeyAlgorithm,
		PublicKey:             req.PublicKey,
		KeyUsage:              keyUsage,
		ExtKeyUsage:           extUsages,
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		BasicConstraintsValid: true,
		IsCA:                  false,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, req.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("failed to sign certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

var keyUsages = map[certificatesv1.KeyUsage]x509.KeyUsage{
	certificatesv1.UsageSigning:           x509.KeyUsageDigitalSignature,
	certificatesv1.UsageDigitalSignature:  x509.KeyUsageDigitalSignature,
	certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment,
	certificatesv1.UsageKeyEncipherment:   x509.KeyUsageKeyEncipherment,
	certificatesv1.UsageKeyAgreement:      x509.KeyUsageKeyAgreement,
	certificatesv1.UsageDataEncipherment:  x509.KeyUsageDataEncipherment,
	certificatesv1.UsageCertSign:          x509.KeyUsageCertSign,
	certificatesv1.UsageCRLSign:           x509.KeyUsageCRLSign,
	certificatesv1.UsageEncipherOnly:      x509.KeyUsageEncipherOnly,
	certificatesv1.UsageDecipherOnly:      x509.KeyUsageDecipherOnly,
}

var extKeyUsages = map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
	certificatesv1.UsageAny:             x509.ExtKeyUsageAny,
	certificatesv1.UsageServerAuth:      x509.ExtKeyUsageServerAuth,
	certificatesv1.UsageClientAuth:      x509.ExtKeyUsageClientAuth,
	certificatesv1.UsageCodeSigning:     x509.ExtKeyUsageCodeSigning,
	certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageSMIME:           x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageIPsecEndSystem:  x509.ExtKeyUsageIPSECEndSystem,
	certificatesv1.UsageIPsecTunnel:     x509.ExtKeyUsageIPSECTunnel,
	certificatesv1.UsageIPsecUser:       x509.ExtKeyUsageIPSECUser,
	certificatesv1.UsageTimestamping:    x509.ExtKeyUsageTimeStamping,
	certificatesv1.UsageOCSPSigning:     x509.ExtKeyUsageOCSPSigning,
	certificatesv1.UsageMicrosoftSGC:    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
	certificatesv1.UsageNetscapeSGC:     x509.ExtKeyUsageNetscapeServerGatedCrypto,
}

// KeyUsages maps API usages to x509 key usages and sorted, unique extended
// key usages (upstream's keyUsagesFromStrings).
func KeyUsages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var ku x509.KeyUsage
	var ext []x509.ExtKeyUsage
	var unknown []certificatesv1.KeyUsage
	for _, u := range usages {
		if v, ok := keyUsages[u]; ok {
			ku |= v
		} else if v, ok := extKeyUsages[u]; ok {
			if !slices.Contains(ext, v) {
				ext = append(ext, v)
			}
		} else {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		return 0, nil, fmt.Errorf("unrecognized usage values: %q", unknown)
	}
	slices.Sort(ext)
	return ku, ext, nil
}

// checkAPIServerClient: client auth required, digital signature and key
// encipherment allowed, nothing else (upstream's
// validAPIServerClientUsages).
func checkAPIServerClient(_ *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	client := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		case certificatesv1.UsageClientAuth:
			client = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !client {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}

// usageSet is the set of usages, sorted and unique.
func usageSet(usages []certificatesv1.KeyUsage) []string {
	out := make([]string, 0, len(usages))
	for _, u := range usages {
		out = append(out, string(u))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckKubeletClient is upstream's ValidateKubeletClientCSR: O=system:nodes
// only, CN system:node:<name>, no SAN, usages {digital signature, (key
// encipherment,) client auth}.
func CheckKubeletClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errors.New("subject organization is not system:nodes")
	}
	if err := noSANs(req, true, true); err != nil {
		return err
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errors.New("subject common name does not begin with system:node:")
	}
	set := usageSet(usages)
	if !slices.Equal(set, []string{"client auth", "digital signature", "key encipherment"}) && !slices.Equal(set, []string{"client auth", "digital signature"}) {
		return fmt.Errorf("usages did not match %v", []string{"client auth", "digital signature", "key encipherment"})
	}
	return nil
}

// checkKubeletServing is upstream's ValidateKubeletServingCSR: O=system:nodes
// only, CN system:node:<name>, at least one DNS or IP SAN and no email or
// URI SAN, usages {digital signature, (key encipherment,) server auth}.
func checkKubeletServing(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errors.New("subject organization is not system:nodes")
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errors.New("DNS or IP subjectAltName is required")
	}
	if err := noSANs(req, false, false); err != nil {
		return err
	}
	set := usageSet(usages)
	if !slices.Equal(set, []string{"digital signature", "key encipherment", "server auth"}) && !slices.Equal(set, []string{"digital signature", "server auth"}) {
		return fmt.Errorf("usages did not match %v", []string{"digital signature", "key encipherment", "server auth"})
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errors.New("subject common name does not begin with system:node:")
	}
	return nil
}

// noSANs refuses email and URI SANs, and DNS and IP SANs when asked.
func noSANs(req *x509.CertificateRequest, dns, ip bool) error {
	switch {
	case dns && len(req.DNSNames) > 0:
		return errors.New("DNS subjectAltNames are not allowed")
	case len(req.EmailAddresses) > 0:
		return errors.New("Email subjectAltNames are not allowed")
	case ip && len(req.IPAddresses) > 0:
		return errors.New("IP subjectAltNames are not allowed")
	case len(req.URIs) > 0:
		return errors.New("URI subjectAltNames are not allowed")
	}
	return nil
}

// IsApproved reports an Approved and no Denied condition (upstream's
// IsCertificateRequestApproved).
func IsApproved(csr *certificatesv1.CertificateSigningRequest) bool {
	approved, denied := approval(csr)
	return approved && !denied
}

func approval(csr *certificatesv1.CertificateSigningRequest) (approved, denied bool) {
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		}
	}
	return approved, denied
}

func hasTrue(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == corev1.ConditionTrue || c.Status == "") {
			return true
		}
	}
	return false
}
