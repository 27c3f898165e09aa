package certificates

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/registry/internaljson"
)

// LegacyUnknownSignerName is the signer name of CSRs made through
// certificates.k8s.io/v1beta1 without one; certificates.k8s.io/v1 refuses
// it on create.
const LegacyUnknownSignerName = "kubernetes.io/legacy-unknown"

// KnownUsages are the usages a request may ask for (upstream's
// allowValidUsages), sorted as field.NotSupported lists them.
var KnownUsages = func() []string {
	u := []certificatesv1.KeyUsage{
		certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature, certificatesv1.UsageContentCommitment,
		certificatesv1.UsageKeyEncipherment, certificatesv1.UsageKeyAgreement, certificatesv1.UsageDataEncipherment,
		certificatesv1.UsageCertSign, certificatesv1.UsageCRLSign, certificatesv1.UsageEncipherOnly,
		certificatesv1.UsageDecipherOnly, certificatesv1.UsageAny, certificatesv1.UsageServerAuth,
		certificatesv1.UsageClientAuth, certificatesv1.UsageCodeSigning, certificatesv1.UsageEmailProtection,
		certificatesv1.UsageSMIME, certificatesv1.UsageIPsecEndSystem, certificatesv1.UsageIPsecTunnel,
		certificatesv1.UsageIPsecUser, certificatesv1.UsageTimestamping, certificatesv1.UsageOCSPSigning,
		certificatesv1.UsageMicrosoftSGC, certificatesv1.UsageNetscapeSGC,
	}
	out := make([]string, len(u))
	for i, x := range u {
		out[i] = string(x)
	}
	slices.Sort(out)
	return out
}()

// ParseCSR decodes the PEM "CERTIFICATE REQUEST" block of pemBytes
// (upstream's certificates.ParseCSR, with its messages).
func ParseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// checkRequest parses the request and checks its signature.
func checkRequest(req []byte) error {
	csr, err := ParseCSR(req)
	if err != nil {
		return err
	}
	return csr.CheckSignature()
}

// checkCertificate accepts empty data or one or more CERTIFICATE PEM
// blocks without headers, each holding certificates.
func checkCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// ValidateSignerName checks a signer name is "<domain>/<path>" (upstream's
// core validation.ValidateSignerName): the domain a DNS name of at least
// two labels, the path dot-separated DNS subdomains.
func ValidateSignerName(fldPath *field.Path, signerName string) field.ErrorList {
	var errs field.ErrorList
	if signerName == "" {
		return append(errs, field.Required(fldPath, ""))
	}
	segments := strings.Split(signerName, "/")
	if len(segments) != 2 {
		return append(errs, field.Invalid(fldPath, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'"))
	}
	domain, path := segments[0], segments[1]
	if len(domain) > utilvalidation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(fldPath, domain, utilvalidation.DNS1123SubdomainMaxLength))
	}
	labels := strings.Split(domain, ".")
	for _, l := range labels {
		if msgs := utilvalidation.IsDNS1123Label(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(fldPath, domain, fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	if len(labels) < 2 {
		errs = append(errs, field.Invalid(fldPath, domain, "should be a domain with at least two segments separated by dots"))
	}
	maxPath := utilvalidation.DNS1123SubdomainMaxLength + utilvalidation.DNS1123LabelMaxLength + 1
	maxName := utilvalidation.DNS1123SubdomainMaxLength + maxPath + 1
	if len(signerName) > maxName {
		errs = append(errs, field.TooLong(fldPath, signerName, maxName))
	}
	if len(path) > maxPath {
		errs = append(errs, field.TooLong(fldPath, path, maxPath))
	}
	for _, l := range strings.Split(path, ".") {
		if msgs := utilvalidation.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(fldPath, path, fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	return errs
}

// options are what an update path may do and which of the old object's
// flaws it tolerates (upstream's certificateValidationOptions).
type options struct {
	allowSettingApprovalConditions bool
	allowSettingCertificate        bool

	allowBothApprovedAndDenied   bool
	allowLegacySignerName        bool
	allowDuplicateConditionTypes bool
	allowEmptyConditionType      bool
	allowArbitraryCertificate    bool
	allowUnknownUsages           bool
	allowDuplicateUsages         bool
}

// optionsFor tolerates in an update what the stored object already has
// (old nil: a create, nothing tolerated).
func optionsFor(csr, old *certificatesv1.CertificateSigningRequest) options {
	if old == nil {
		return options{}
	}
	var o options
	approved, denied := false, false
	seen := map[certificatesv1.RequestConditionType]bool{}
	for _, c := range old.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case "":
			o.allowEmptyConditionType = true
		}
		if seen[c.Type] {
			o.allowDuplicateConditionTypes = true
		}
		seen[c.Type] = true
	}
	o.allowBothApprovedAndDenied = approved && denied
	o.allowLegacySignerName = old.Spec.SignerName == LegacyUnknownSignerName
	o.allowArbitraryCertificate = bytes.Equal(csr.Status.Certificate, old.Status.Certificate) || checkCertificate(old.Status.Certificate) != nil
	usages := map[certificatesv1.KeyUsage]bool{}
	for _, u := range old.Spec.Usages {
		if _, known := slices.BinarySearch(KnownUsages, string(u)); !known {
			o.allowUnknownUsages = true
		}
		if usages[u] {
			o.allowDuplicateUsages = true
		}
		usages[u] = true
	}
	return o
}

// ValidateCreate validates a new request (metadata aside: the store
// validates it; upstream accepts any name).
func ValidateCreate(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validate(csr, optionsFor(csr, nil))
}

// ValidateUpdate validates an update of the main resource.
func ValidateUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validateUpdate(csr, old, optionsFor(csr, old))
}

// ValidateStatusUpdate validates an update through /status, which may set
// the certificate.
func ValidateStatusUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	o := optionsFor(csr, old)
	o.allowSettingCertificate = true
	return validateUpdate(csr, old, o)
}

// ValidateApprovalUpdate validates an update through /approval, which may
// add Approved or Denied conditions.
func ValidateApprovalUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	o := optionsFor(csr, old)
	o.allowSettingApprovalConditions = true
	return validateUpdate(csr, old, o)
}

func validate(csr *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if err := checkRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(spec.Child("usages"), ""))
	}
	if !o.allowUnknownUsages {
		for i, u := range csr.Spec.Usages {
			if _, known := slices.BinarySearch(KnownUsages, string(u)); !known {
				errs = append(errs, field.NotSupported(spec.Child("usages").Index(i), u, KnownUsages))
			}
		}
	}
	if !o.allowDuplicateUsages {
		seen := map[certificatesv1.KeyUsage]bool{}
		for i, u := range csr.Spec.Usages {
			if seen[u] {
				errs = append(errs, field.Duplicate(spec.Child("usages").Index(i), u))
			}
			seen[u] = true
		}
	}
	if !o.allowLegacySignerName && csr.Spec.SignerName == LegacyUnknownSignerName {
		errs = append(errs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, ValidateSignerName(spec.Child("signerName"), csr.Spec.SignerName)...)
	}
	if csr.Spec.ExpirationSeconds != nil && *csr.Spec.ExpirationSeconds < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *csr.Spec.ExpirationSeconds, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateConditions(field.NewPath("status", "conditions"), csr, o)...)
	if !o.allowArbitraryCertificate {
		if err := checkCertificate(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

// trueOnly are the condition types whose status may only be True.
var trueOnly = map[certificatesv1.RequestConditionType]bool{
	certificatesv1.CertificateApproved: true,
	certificatesv1.CertificateDenied:   true,
	certificatesv1.CertificateFailed:   true,
}

func validateConditions(fldPath *field.Path, csr *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	approved, denied := false, false
	for i, c := range csr.Status.Conditions {
		p := fldPath.Index(i)
		if !o.allowEmptyConditionType && c.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		if trueOnly[c.Type] {
			allowed = []string{string(corev1.ConditionTrue)}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(p.Child("status"), ""))
		case !slices.Contains(allowed, string(c.Status)):
			errs = append(errs, field.NotSupported(p.Child("status"), c.Status, allowed))
		}
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		}
		if !o.allowDuplicateConditionTypes {
			if seen[c.Type] {
				errs = append(errs, field.Duplicate(p.Child("type"), c.Type))
			}
			seen[c.Type] = true
		}
	}
	if approved && denied && !o.allowBothApprovedAndDenied {
		errs = append(errs, approvedAndDenied(fldPath))
	}
	return errs
}

// approvedAndDenied is the error of the beta declarative rule
// +k8s:zeroOrOneOfMember on status.conditions' Approved and Denied entries
// (k8s.io/kubernetes@v1.37.2 pkg/apis/certificates/v1/
// zz_generated.validations.go, validate.ZeroOrOneOfUnion), which replaces
// the handwritten "Approved and Denied conditions are mutually exclusive"
// upstream marks covered: one error on the list, after the handwritten
// ones. It is not raised when the stored request already had both (the
// handwritten option; the declarative rule skips an unchanged membership).
func approvedAndDenied(fldPath *field.Path) *field.Error {
	const approved, denied = `conditions[{"type": "Approved"}]`, `conditions[{"type": "Denied"}]`
	return field.Invalid(fldPath, "{"+approved+", "+denied+"}", "must specify at most one of: `"+approved+"`, `"+denied+"`").
		WithOrigin("zeroOrOneOf").MarkCoveredByDeclarative().MarkBeta()
}

func validateUpdate(csr, old *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	errs := validate(csr, o)
	conditions := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(findConditions(csr, t)) < len(findConditions(old, t)) {
			errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !o.allowSettingApprovalConditions {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			oldC, newC := findConditions(old, t), findConditions(csr, t)
			switch {
			case len(newC) < len(oldC):
				// Reported above.
			case len(newC) > len(oldC):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !equality.Semantic.DeepEqual(oldC, newC):
				// As upstream: a diff of the conditions (internal form).
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not modify a condition of type %q\n%v", t, internaljson.Diff(oldC, newC))))
			}
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		certificate := field.NewPath("status", "certificate")
		if !o.allowSettingCertificate {
			errs = append(errs, field.Forbidden(certificate, "updates may not set certificate content"))
		} else if len(old.Status.Certificate) > 0 {
			errs = append(errs, field.Forbidden(certificate, "updates may not modify existing certificate content"))
		}
	}
	return errs
}

func findConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}
