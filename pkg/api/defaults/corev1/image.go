package corev1

import (
	"regexp"
	"strings"
	"sync"
)

// The grammar of a container image reference, as the container tooling
// kube uses reads it (github.com/distribution/reference, the grammar in
// its regexp.go):
//
//	reference  := name [ ":" tag ] [ "@" digest ]
//	name       := [domain '/'] path-component ['/' path-component]*
//	domain     := host [':' port]
//	tag        := [\w][\w.-]{0,127}
//	digest     := algorithm ":" hex (at least 32 hex digits)
var (
	refAlphanumeric  = `[a-z0-9]+`
	refSeparator     = `(?:[._]|__|[-]+)`
	refPathComponent = refAlphanumeric + `(?:` + refSeparator + refAlphanumeric + `)*`
	refDomainLabel   = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refHost          = `(?:` + refDomainLabel + `(?:\.` + refDomainLabel + `)*|\[[a-fA-F0-9:]+\])`
	refDomain        = refHost + `(?::[0-9]+)?`
	refName          = `(?:` + refDomain + `/)?` + refPathComponent + `(?:/` + refPathComponent + `)*`
	refTag           = `[\w][\w.-]{0,127}`
	refDigest        = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`

	// Compiled on first use, not at package initialisation (which every
	// process start pays for): only pods' defaulting parses images.
	referenceRegexp = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(` + refName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	})
	identifierRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-f0-9]{64}$`) })
)

// nameTotalLengthMax is the longest repository name accepted.
const nameTotalLengthMax = 255

// digestHexLength is the encoded length of the digest algorithms a
// kube-apiserver binary can verify.
var digestHexLength = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

// imageTag returns the tag of image as kube reads it to default a
// container's imagePullPolicy (upstream's parsers.ParseImageName): the
// reference is normalized as the docker CLI does ("nginx" is
// "docker.io/library/nginx"), "latest" is the tag of a reference with
// neither tag nor digest, and ok is false for a reference that does not
// parse.
func imageTag(image string) (tag string, ok bool) {
	if identifierRegexp().MatchString(image) {
		return "", false
	}
	domain, remainder := splitDockerDomain(image)
	remoteName := remainder
	if i := strings.IndexByte(remainder, ':'); i >= 0 {
		remoteName = remainder[:i]
	}
	if strings.ToLower(remoteName) != remoteName {
		return "", false
	}
	m := referenceRegexp().FindStringSubmatch(domain + "/" + remainder)
	if m == nil || len(m[1]) > nameTotalLengthMax {
		return "", false
	}
	tag, digest := m[2], m[3]
	if digest != "" && !validDigest(digest) {
		return "", false
	}
	if tag == "" && digest == "" {
		tag = "latest"
	}
	return tag, true
}

// splitDockerDomain splits a reference into its registry and the rest, as
// the docker CLI: a first component without "." or ":" (other than
// "localhost", and in lower case) is part of the path on docker.io, and
// docker.io's single-component names live under "library/".
func splitDockerDomain(name string) (domain, remainder string) {
	const defaultDomain, legacyDefaultDomain = "docker.io", "index.docker.io"
	i := strings.IndexByte(name, '/')
	if i == -1 || (!strings.ContainsAny(name[:i], ".:") && name[:i] != "localhost" && strings.ToLower(name[:i]) == name[:i]) {
		domain, remainder = defaultDomain, name
	} else {
		domain, remainder = name[:i], name[i+1:]
	}
	if domain == legacyDefaultDomain {
		domain = defaultDomain
	}
	if domain == defaultDomain && !strings.Contains(remainder, "/") {
		remainder = "library/" + remainder
	}
	return domain, remainder
}

// validDigest reports whether d ("<algorithm>:<hex>") names a supported
// algorithm with an encoded value of its length, in lower-case hex.
func validDigest(d string) bool {
	alg, hex, _ := strings.Cut(d, ":")
	n, ok := digestHexLength[alg]
	if !ok || len(hex) != n {
		return false
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
