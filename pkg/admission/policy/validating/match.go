package validating

import (
	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/policy/matching"
)

// The matcher and the namespace reader are shared with the
// MutatingAdmissionPolicy plugin (package matching).
type matcher = matching.Matcher

// NamespaceGetter reads a namespace.
type NamespaceGetter = matching.NamespaceGetter

var (
	newMatcher  = matching.NewMatcher
	namespaceOf = matching.NamespaceOf
)

// match is what a policy matched: the request's resource and kind, or
// equivalent ones (matchPolicy Equivalent), to which the objects are
// converted.
type match = admission.Equivalent
