package certificates

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation"
)

// Limits of PodCertificateRequests (upstream's pkg/apis/certificates
// types.go constants, v1.37).
const (
	// MaxStubPKCS10RequestSize bounds spec.stubPKCS10Request (10 KiB, as
	// upstream's MaxPKIXPublicKeySize and MaxProofOfPossessionSize, the
	// fields it replaced).
	MaxStubPKCS10RequestSize = 10 * 1024
	// MaxCertificateChainSize bounds status.certificateChain (100 KiB).
	MaxCertificateChainSize = 100 * 1024
	// MinMaxExpirationSeconds is the least spec.maxExpirationSeconds (1h).
	MinMaxExpirationSeconds = 60 * 60
	// MaxMaxExpirationSeconds is the most spec.maxExpirationSeconds of
	// other signers (91 days).
	MaxMaxExpirationSeconds = 91 * 24 * 60 * 60
	// KubernetesMaxMaxExpirationSeconds is the most of kubernetes.io
	// signers (24h).
	KubernetesMaxMaxExpirationSeconds = 24 * 60 * 60
	// maxUIDLength bounds the UIDs of the spec.
	maxUIDLength = 128
)

// IsKubernetesSignerName reports a signer reserved by the Kubernetes
// project: domain kubernetes.io or a subdomain of it (upstream's core
// validation.IsKubernetesSignerName).
func IsKubernetesSignerName(signerName string) bool {
	host, _, _ := strings.Cut(signerName, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

var (
	pcrSpec          = field.NewPath("spec")
	stubPath         = pcrSpec.Child("stubPKCS10Request")
	certChainPath    = field.NewPath("status", "certificateChain")
	notBeforePath    = field.NewPath("status", "notBefore")
	notAfterPath     = field.NewPath("status", "notAfter")
	beginRefreshPath = field.NewPath("status", "beginRefreshAt")
)

// ValidatePodCertificateRequestCreate is upstream's
// ValidatePodCertificateRequestCreate (pkg/apis/certificates/validation,
// v1.37): metadata, signer name, user annotations, the pod, service
// account and node identities, maxExpirationSeconds within
// [3600, 86400] for kubernetes.io signers and [3600, 7862400] for others,
// and the key material.
//
// The v1 API carries the key as spec.stubPKCS10Request (a DER PKCS#10
// request) where v1alpha1/v1beta1 had pkixPublicKey and
// proofOfPossession: as upstream's validateStubPKCS10Request, a
// parseable request whose self-signature verifies, at most 10 KiB, with
// an RSA 3072/4096, ECDSA P-256/P-384/P-521 or Ed25519 key, and upstream's
// messages.
func ValidatePodCertificateRequestCreate(req *certificatesv1.PodCertificateRequest) field.ErrorList {
	errs := corevalidation.ValidateObjectMeta(&req.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, ValidateSignerName(pcrSpec.Child("signerName"), req.Spec.SignerName)...)
	if req.Spec.UnverifiedUserAnnotations != nil {
		errs = append(errs, validateUserAnnotations(req.Spec.UnverifiedUserAnnotations, pcrSpec.Child("unverifiedUserAnnotations"))...)
	}
	name := func(p *field.Path, v string) {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(v, false) {
			errs = append(errs, field.Invalid(p, v, msg))
		}
	}
	uid := func(p *field.Path, v string) {
		if v == "" {
			errs = append(errs, field.Invalid(p, v, "must not be empty"))
		}
		if len(v) > maxUIDLength {
			errs = append(errs, field.TooLong(p, v, maxUIDLength))
		}
	}
	name(pcrSpec.Child("podName"), req.Spec.PodName)
	uid(pcrSpec.Child("podUID"), string(req.Spec.PodUID))
	name(pcrSpec.Child("serviceAccountName"), req.Spec.ServiceAccountName)
	uid(pcrSpec.Child("serviceAccountUID"), string(req.Spec.ServiceAccountUID))
	name(pcrSpec.Child("nodeName"), string(req.Spec.NodeName))
	uid(pcrSpec.Child("nodeUID"), string(req.Spec.NodeUID))

	maxPath := pcrSpec.Child("maxExpirationSeconds")
	if req.Spec.MaxExpirationSeconds == nil {
		return append(errs, field.Required(maxPath, "must be set"))
	}
	upper := MaxMaxExpirationSeconds
	if IsKubernetesSignerName(req.Spec.SignerName) {
		upper = KubernetesMaxMaxExpirationSeconds
	}
	if v := int(*req.Spec.MaxExpirationSeconds); v < MinMaxExpirationSeconds || v > upper {
		errs = append(errs, field.Invalid(maxPath, *req.Spec.MaxExpirationSeconds, fmt.Sprintf("must be in the range [%d, %d]", MinMaxExpirationSeconds, upper)))
	}
	return append(errs, validateStubRequest(req.Spec.StubPKCS10Request)...)
}

// validateUserAnnotations checks spec.unverifiedUserAnnotations as the
// API documents it: metadata annotation rules (keys qualified names, 256
// KiB in all), and every key domain-prefixed.
func validateUserAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateAnnotations(annotations, fldPath)
	for k := range annotations {
		if !strings.Contains(k, "/") {
			errs = append(errs, field.Invalid(fldPath.Key(k), k, "must be domain-prefixed (e.g. 'example.com/key')"))
		}
	}
	return errs
}

// validateStubRequest checks the DER PKCS#10 request and its key.
func validateStubRequest(der []byte) field.ErrorList {
	if len(der) == 0 {
		// Upstream checks "(stubPKCS10Request) xor (pkixPublicKey,
		// proofOfPossession)"; v1 has only the former, so an empty one is
		// this error.
		return field.ErrorList{field.Invalid(pcrSpec, field.OmitValueType{}, "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set")}
	}
	if len(der) > MaxStubPKCS10RequestSize {
		return field.ErrorList{field.TooLong(stubPath, field.OmitValueType{}, MaxStubPKCS10RequestSize)}
	}
	csr, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(stubPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := csr.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(stubPath, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(stubPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(stubPath, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if err := csr.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(stubPath, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

// ValidatePodCertificateRequestUpdate is upstream's: metadata rules, and
// the whole spec immutable.
func ValidatePodCertificateRequestUpdate(req, old *certificatesv1.PodCertificateRequest) field.ErrorList {
	errs := corevalidation.ValidateObjectMetaUpdate(&req.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, corevalidation.ValidateImmutableField(req.Spec, old.Spec, pcrSpec)...)
}

// ValidatePodCertificateRequestStatusUpdate is upstream's (v1.37): at
// most one of the Issued, Denied and Failed conditions, status True, no
// other type; once one is set the status is frozen; Denied and Failed
// carry conditions only; Issued needs a chain whose leaf is issued to the
// requested key, lives 1h..maxExpirationSeconds, with notBefore (within 5
// minutes of now), notAfter and beginRefreshAt consistent with it. now is
// the server's clock.
func ValidatePodCertificateRequestStatusUpdate(req, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	errs := corevalidation.ValidateObjectMetaUpdate(&req.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if len(errs) > 0 {
		return errs
	}
	known := 0
	for i, c := range req.Status.Conditions {
		// Upstream builds these paths with a child named "[i]", which
		// prints as "status.conditions.[i].type".
		p := field.NewPath("status", "conditions", "["+strconv.Itoa(i)+"]")
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			known++
			if known > 1 {
				errs = append(errs, field.Invalid(p.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				errs = append(errs, field.NotSupported(p.Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), c.Type, []string{certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed}))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(req.Status.Conditions, field.NewPath("status", "conditions"))...)
	if len(errs) > 0 {
		return errs
	}
	status := field.NewPath("status")
	if pcrHas(old, certificatesv1.PodCertificateRequestConditionTypeIssued) || pcrHas(old, certificatesv1.PodCertificateRequestConditionTypeDenied) || pcrHas(old, certificatesv1.PodCertificateRequestConditionTypeFailed) {
		return semanticallyEqual(req.Status, old.Status, status, "immutable after PodCertificateRequest is issued, denied, or failed")
	}
	if pcrHas(req, certificatesv1.PodCertificateRequestConditionTypeDenied) || pcrHas(req, certificatesv1.PodCertificateRequestConditionTypeFailed) {
		return semanticallyEqual(req.Status, certificatesv1.PodCertificateRequestStatus{Conditions: req.Status.Conditions}, status, "non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	}
	if pcrHas(req, certificatesv1.PodCertificateRequestConditionTypeIssued) {
		return validateIssued(req, old, now)
	}
	return semanticallyEqual(req.Status, old.Status, status, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

func validateIssued(req, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	chain := req.Status.CertificateChain
	if len(chain) > MaxCertificateChainSize {
		return field.ErrorList{field.TooLong(certChainPath, chain, MaxCertificateChainSize)}
	}
	leafBlock, rest := pem.Decode([]byte(chain))
	if leafBlock == nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must contain at least one certificate")}
	}
	if leafBlock.Type != "CERTIFICATE" {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "leaf certificate does not parse as valid X.509")}
	}
	var errs field.ErrorList
	for _, dns := range leaf.DNSNames {
		if dns == "" {
			errs = append(errs, field.Invalid(certChainPath, dns, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(dns, "..") {
			errs = append(errs, field.Invalid(certChainPath, dns, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(dns, ".") || strings.HasSuffix(dns, ".") {
			errs = append(errs, field.Invalid(certChainPath, dns, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, email := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(email); err != nil {
			errs = append(errs, field.Invalid(certChainPath, email, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	// Was the certificate issued to the requested key?
	csr, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request)
	if err != nil {
		return append(errs, field.Invalid(stubPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR"))
	}
	if k, ok := csr.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); !ok || !k.Equal(leaf.PublicKey) {
		return append(errs, field.Invalid(certChainPath, chain, "leaf certificate was not issued to the requested public key"))
	}
	if req.Status.NotBefore == nil {
		errs = append(errs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if req.Status.NotAfter == nil {
		errs = append(errs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if req.Status.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(errs) > 0 {
		return errs
	}
	notBefore, notAfter, refresh := req.Status.NotBefore.Time, req.Status.NotAfter.Time, req.Status.BeginRefreshAt.Time
	switch {
	case !notBefore.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(notBeforePath, notBefore, "must be set to the NotBefore time encoded in the leaf certificate")}
	case !(notBefore.After(now.Add(-5*time.Minute)) && notBefore.Before(now.Add(5*time.Minute))):
		return field.ErrorList{field.Invalid(notBeforePath, notBefore, "must be set to within 5 minutes of kube-apiserver's current time")}
	case !notAfter.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(notAfterPath, notAfter, "must be set to the NotAfter time encoded in the leaf certificate")}
	}
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	switch {
	case lifetime < time.Hour:
		return field.ErrorList{field.Invalid(certChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")}
	case req.Spec.MaxExpirationSeconds != nil && lifetime > time.Duration(*req.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(certChainPath, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *req.Spec.MaxExpirationSeconds))}
	case refresh.Before(notBefore.Add(10 * time.Minute)):
		return field.ErrorList{field.Invalid(beginRefreshPath, refresh, "must be at least 10 minutes after status.notBefore")}
	case refresh.After(notAfter.Add(-10 * time.Minute)):
		return field.ErrorList{field.Invalid(beginRefreshPath, refresh, "must be at least 10 minutes before status.notAfter")}
	}
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if b.Type != "CERTIFICATE" {
			// Upstream's message, typo included.
			return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(certChainPath, chain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}

func pcrHas(req *certificatesv1.PodCertificateRequest, t string) bool {
	for _, c := range req.Status.Conditions {
		if c.Type == t && c.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}

// semanticallyEqual is upstream's validateSemanticEquality: Invalid with
// the value omitted and detail when a and b differ.
func semanticallyEqual(a, b any, p *field.Path, detail string) field.ErrorList {
	if equality.Semantic.DeepEqual(a, b) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, field.OmitValueType{}, detail)}
}
