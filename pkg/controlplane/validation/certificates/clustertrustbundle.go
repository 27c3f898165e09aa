package certificates

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxTrustBundleSize is the largest spec.trustBundle accepted (upstream's
// certificates.MaxTrustBundleSize: 1 MiB).
const MaxTrustBundleSize = 1 << 20

// omitted stands for a trust bundle in error values, as upstream's.
const omitted = "<value omitted>"

// ClusterTrustBundleName returns the name rule of a bundle with the given
// signer name (upstream's ValidateClusterTrustBundleName): without a
// signer, a DNS subdomain without ":"; with one, the signer name with "/"
// replaced by ":" and a ":" as prefix, then a DNS subdomain.
func ClusterTrustBundleName(signerName string) apimachineryvalidation.ValidateNameFunc {
	return func(name string, prefix bool) []string {
		if signerName == "" {
			if strings.Contains(name, ":") {
				return []string{`ClusterTrustBundle without signer name must not have ":" in its name`}
			}
			return apimachineryvalidation.NameIsDNSSubdomain(name, prefix)
		}
		want := strings.ReplaceAll(signerName, "/", ":") + ":"
		if !strings.HasPrefix(name, want) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signerName, want)}
		}
		return apimachineryvalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, want), prefix)
	}
}

// ValidateClusterTrustBundle validates a bundle (upstream's
// ValidateClusterTrustBundle). The store has checked the rest of the
// metadata; the name rule depends on the signer name, so it is here.
// parseBundle false skips parsing the PEM data (updates that keep it).
func ValidateClusterTrustBundle(b *certificatesv1.ClusterTrustBundle, parseBundle bool) field.ErrorList {
	var errs field.ErrorList
	namePath := field.NewPath("metadata", "name")
	if b.Name != "" {
		for _, msg := range ClusterTrustBundleName(b.Spec.SignerName)(b.Name, false) {
			errs = append(errs, field.Invalid(namePath, b.Name, msg))
		}
	} else if b.GenerateName != "" {
		for _, msg := range ClusterTrustBundleName(b.Spec.SignerName)(b.GenerateName, true) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "generateName"), b.GenerateName, msg))
		}
	}
	if b.Spec.SignerName != "" {
		errs = append(errs, ValidateSignerName(field.NewPath("spec", "signerName"), b.Spec.SignerName)...)
	}
	if parseBundle {
		errs = append(errs, validateTrustBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	return errs
}

// ValidateClusterTrustBundleUpdate validates an update: the signer name is
// immutable; an unchanged trust bundle is not parsed again (upstream
// tolerates data older parsers accepted).
func ValidateClusterTrustBundleUpdate(b, old *certificatesv1.ClusterTrustBundle) field.ErrorList {
	errs := ValidateClusterTrustBundle(b, b.Spec.TrustBundle != old.Spec.TrustBundle)
	if b.Spec.SignerName != old.Spec.SignerName {
		errs = append(errs, field.Invalid(field.NewPath("spec", "signerName"), b.Spec.SignerName, "field is immutable"))
	}
	return errs
}

// validateTrustBundle accepts one or more distinct PEM CERTIFICATE blocks
// without headers, each an X.509 CA certificate with valid basic
// constraints (upstream's validateTrustBundle and its messages).
func validateTrustBundle(path *field.Path, in string) field.ErrorList {
	if len(in) > MaxTrustBundleSize {
		return field.ErrorList{field.TooLong(path, "", MaxTrustBundleSize)}
	}
	var errs field.ErrorList
	seen := map[string][]int{}
	var order []string
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		var msg string
		switch {
		case b.Type != "CERTIFICATE":
			msg = fmt.Sprintf("entry %d has bad block type: %v", i, b.Type)
		case len(b.Headers) != 0:
			msg = fmt.Sprintf("entry %d has PEM block headers", i)
		default:
			cert, err := x509.ParseCertificate(b.Bytes)
			switch {
			case err != nil:
				msg = fmt.Sprintf("entry %d does not parse as X.509", i)
			case !cert.IsCA:
				msg = fmt.Sprintf("entry %d does not have the CA bit set", i)
			case !cert.BasicConstraintsValid:
				msg = fmt.Sprintf("entry %d has invalid basic constraints", i)
			}
		}
		if msg != "" {
			errs = append(errs, field.Invalid(path, omitted, msg))
			continue
		}
		k := string(b.Bytes)
		if _, ok := seen[k]; !ok {
			order = append(order, k)
		}
		seen[k] = append(seen[k], i)
	}
	// Upstream reports no duplicate or missing anchors after a bad block.
	if len(errs) != 0 {
		return errs
	}
	if len(seen) == 0 {
		return field.ErrorList{field.Invalid(path, omitted, "at least one trust anchor must be provided")}
	}
	for _, k := range order {
		if idx := seen[k]; len(idx) > 1 {
			errs = append(errs, field.Invalid(path, omitted, fmt.Sprintf("duplicate trust anchor (indices %v)", idx)))
		}
	}
	return errs
}
