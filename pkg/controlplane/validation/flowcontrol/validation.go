package flowcontrol

import (
	"fmt"
	"math"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/bootstrap"
)

// ValidateName is the name validation of both kinds: a path segment name
// (upstream ValidateFlowSchemaName / ValidatePriorityLevelConfigurationName).
func ValidateName(name string, prefix bool) []string { return path.IsValidPathSegmentName(name) }

var (
	supportedVerbs = sets.New("get", "list", "create", "update", "delete", "deletecollection", "patch", "watch", "proxy")
	// Upstream lists a sets.String: sorted.
	supportedSubjectKinds         = []string{string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount), string(flowcontrolv1.SubjectKindUser)}
	supportedDistinguisherMethods = []string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}
	supportedPLTypes              = []string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}
	supportedLimitResponseTypes   = []string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)}
	supportedConditionStatuses    = []string{string(flowcontrolv1.ConditionTrue), string(flowcontrolv1.ConditionFalse), string(flowcontrolv1.ConditionUnknown)}
)

// upstream's shuffle-sharding bound: the entropy a hand needs.
const maxHashBits = 60

// ValidateFlowSchema checks a FlowSchema's spec (metadata is the store's).
func ValidateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := validateFlowSchemaSpec(fs.Name, &fs.Spec, specPath)
	if mandatory := mandatoryFlowSchema(fs.Name); mandatory != nil && !apiequality.Semantic.DeepEqual(fs.Spec, mandatory.Spec) {
		allErrs = append(allErrs, field.Invalid(specPath, fs.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
	}
	return allErrs
}

func mandatoryFlowSchema(name string) *flowcontrolv1.FlowSchema {
	for _, fs := range bootstrap.MandatoryFlowSchemas() {
		if fs.Name == name {
			return fs
		}
	}
	return nil
}

func mandatoryPLC(name string) *flowcontrolv1.PriorityLevelConfiguration {
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations() {
		if pl.Name == name {
			return pl
		}
	}
	return nil
}

func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.MatchingPrecedence <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("matchingPrecedence"), spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("matchingPrecedence"), spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	}
	if spec.DistinguisherMethod != nil && !contains(supportedDistinguisherMethods, string(spec.DistinguisherMethod.Type)) {
		// Upstream's value is the method itself, not its type: kube-apiserver
		// v1.37.2 answers Unsupported value: {"Type":"Bogus"}.
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("distinguisherMethod").Child("type"), spec.DistinguisherMethod, supportedDistinguisherMethods))
	}
	plPath := fldPath.Child("priorityLevelConfiguration").Child("name")
	if spec.PriorityLevelConfiguration.Name == "" {
		allErrs = append(allErrs, field.Required(plPath, "must reference a priority level"))
	} else {
		for _, msg := range ValidateName(spec.PriorityLevelConfiguration.Name, false) {
			allErrs = append(allErrs, field.Invalid(plPath, spec.PriorityLevelConfiguration.Name, msg))
		}
	}
	for i, rule := range spec.Rules {
		allErrs = append(allErrs, validatePolicyRulesWithSubjects(rule, fldPath.Child("rules").Index(i))...)
	}
	return allErrs
}

func validatePolicyRulesWithSubjects(rule flowcontrolv1.PolicyRulesWithSubjects, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(rule.Subjects) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("subjects"), "subjects must contain at least one value"))
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i, s := range rule.Subjects {
		allErrs = append(allErrs, validateSubject(&s, fldPath.Child("subjects").Index(i))...)
	}
	for i, r := range rule.ResourceRules {
		allErrs = append(allErrs, validateResourcePolicyRule(&r, fldPath.Child("resourceRules").Index(i))...)
	}
	for i, r := range rule.NonResourceRules {
		allErrs = append(allErrs, validateNonResourcePolicyRule(&r, fldPath.Child("nonResourceRules").Index(i))...)
	}
	return allErrs
}

func validateSubject(s *flowcontrolv1.Subject, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("serviceAccount"), "serviceAccount is required when subject kind is 'ServiceAccount'"))
		} else {
			if s.ServiceAccount.Name == "" {
				allErrs = append(allErrs, field.Required(fldPath.Child("serviceAccount").Child("name"), ""))
			} else if s.ServiceAccount.Name != flowcontrolv1.NameAll {
				for _, msg := range apimachineryvalidation.ValidateServiceAccountName(s.ServiceAccount.Name, false) {
					allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceAccount").Child("name"), s.ServiceAccount.Name, msg))
				}
			}
			if s.ServiceAccount.Namespace == "" {
				allErrs = append(allErrs, field.Required(fldPath.Child("serviceAccount").Child("namespace"), ""))
			} else {
				for _, msg := range apimachineryvalidation.ValidateNamespaceName(s.ServiceAccount.Namespace, false) {
					allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceAccount").Child("namespace"), s.ServiceAccount.Namespace, msg))
				}
			}
		}
		if s.User != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("user"), "user is forbidden when subject kind is not 'User'"))
		}
		if s.Group != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("group"), "group is forbidden when subject kind is not 'Group'"))
		}
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("user").Child("name"), ""))
		}
		if s.ServiceAccount != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))
		}
		if s.Group != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("group"), "group is forbidden when subject kind is not 'Group'"))
		}
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("group").Child("name"), ""))
		}
		if s.ServiceAccount != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))
		}
		if s.User != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("user"), "user is forbidden when subject kind is not 'User'"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), s.Kind, supportedSubjectKinds))
	}
	return allErrs
}

func validateVerbs(verbs []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(verbs) == 0 {
		return field.ErrorList{field.Required(fldPath, "verbs must contain at least one value")}
	}
	if contains(verbs, flowcontrolv1.VerbAll) {
		if len(verbs) > 1 {
			allErrs = append(allErrs, field.Invalid(fldPath, verbs, "if '*' is present, must not specify other verbs"))
		}
		return allErrs
	}
	if bad := sets.New(verbs...).Difference(supportedVerbs); bad.Len() > 0 {
		allErrs = append(allErrs, field.NotSupported(fldPath, verbs, sets.List(supportedVerbs)))
	}
	return allErrs
}

func validateResourcePolicyRule(rule *flowcontrolv1.ResourcePolicyRule, fldPath *field.Path) field.ErrorList {
	allErrs := validateVerbs(rule.Verbs, fldPath.Child("verbs"))
	if len(rule.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiGroups"), "resource rules must supply at least one api group"))
	} else if len(rule.APIGroups) > 1 && contains(rule.APIGroups, flowcontrolv1.APIGroupAll) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroups"), rule.APIGroups, "if '*' is present, must not specify other api groups"))
	}
	if len(rule.Resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("resources"), "resource rules must supply at least one resource"))
	} else if len(rule.Resources) > 1 && contains(rule.Resources, flowcontrolv1.ResourceAll) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("resources"), rule.Resources, "if '*' is present, must not specify other resources"))
	}
	if len(rule.Namespaces) == 0 && !rule.ClusterScope {
		allErrs = append(allErrs, field.Required(fldPath.Child("namespaces"), "resource rules that are not cluster scoped must supply at least one namespace"))
	} else if len(rule.Namespaces) > 1 && contains(rule.Namespaces, flowcontrolv1.NamespaceEvery) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("namespaces"), rule.Namespaces, "if '*' is present, must not specify other namespaces"))
	}
	for i, ns := range rule.Namespaces {
		if ns == flowcontrolv1.NamespaceEvery {
			continue
		}
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("namespaces").Index(i), ns, nsErrIntro+msg))
		}
	}
	return allErrs
}

const nsErrIntro = "each member of this list must be '*' or a DNS-1123 label; "

func validateNonResourcePolicyRule(rule *flowcontrolv1.NonResourcePolicyRule, fldPath *field.Path) field.ErrorList {
	allErrs := validateVerbs(rule.Verbs, fldPath.Child("verbs"))
	if len(rule.NonResourceURLs) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("nonResourceURLs"), "nonResourceURLs must contain at least one value"))
	} else if len(rule.NonResourceURLs) > 1 && contains(rule.NonResourceURLs, flowcontrolv1.NonResourceAll) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
	}
	for i, u := range rule.NonResourceURLs {
		p := fldPath.Child("nonResourceURLs").Index(i)
		switch {
		case u == flowcontrolv1.NonResourceAll:
		case u == "":
			allErrs = append(allErrs, field.Invalid(p, u, "must not be empty"))
		case u == "/":
		case !strings.HasPrefix(u, "/"):
			allErrs = append(allErrs, field.Invalid(p, u, "must start with slash"))
		case strings.Contains(u, "//"):
			allErrs = append(allErrs, field.Invalid(p, u, "must not contain double slash"))
		case strings.Contains(u[:len(u)-1], "*") || (strings.HasSuffix(u, "*") && !strings.HasSuffix(u, "/*")):
			allErrs = append(allErrs, field.Invalid(p, u, "wildcard can only do suffix glob matching"))
		}
	}
	return allErrs
}

// ValidateFlowSchemaStatus checks the conditions of a FlowSchema's status.
func ValidateFlowSchemaStatus(st *flowcontrolv1.FlowSchemaStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[flowcontrolv1.FlowSchemaConditionType]()
	for i, c := range st.Conditions {
		p := fldPath.Child("conditions").Index(i)
		if seen.Has(c.Type) {
			allErrs = append(allErrs, field.Duplicate(p.Child("type"), c.Type))
		}
		seen.Insert(c.Type)
		allErrs = append(allErrs, validateCondition(string(c.Type), string(c.Status), p)...)
	}
	return allErrs
}

// ValidatePriorityLevelConfigurationStatus checks a priority level's
// status conditions.
func ValidatePriorityLevelConfigurationStatus(st *flowcontrolv1.PriorityLevelConfigurationStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[flowcontrolv1.PriorityLevelConfigurationConditionType]()
	for i, c := range st.Conditions {
		p := fldPath.Child("conditions").Index(i)
		if seen.Has(c.Type) {
			allErrs = append(allErrs, field.Duplicate(p.Child("type"), c.Type))
		}
		seen.Insert(c.Type)
		allErrs = append(allErrs, validateCondition(string(c.Type), string(c.Status), p)...)
	}
	return allErrs
}

func validateCondition(typ, status string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if typ == "" {
		allErrs = append(allErrs, field.Required(p.Child("type"), "must not be empty"))
	}
	if !contains(supportedConditionStatuses, status) {
		allErrs = append(allErrs, field.NotSupported(p.Child("status"), status, supportedConditionStatuses))
	}
	return allErrs
}

// ValidatePriorityLevelConfiguration checks a priority level's spec; for
// the mandatory levels the spec must equal upstream's fixed value (the
// exempt level's exempt section aside, which may be tuned).
func ValidatePriorityLevelConfiguration(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := validatePLCSpec(pl.Name, &pl.Spec, specPath)
	if mandatory := mandatoryPLC(pl.Name); mandatory != nil {
		got, want := pl.Spec.DeepCopy(), mandatory.Spec.DeepCopy()
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			got.Exempt, want.Exempt = nil, nil
		}
		if !apiequality.Semantic.DeepEqual(got, want) {
			allErrs = append(allErrs, field.Invalid(specPath, pl.Spec, fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)))
		}
	}
	return allErrs
}

// validatePLCSpec is upstream's ValidatePriorityLevelConfigurationSpec
// (k8s.io/kubernetes@v1.37.2 pkg/apis/flowcontrol/validation) without the
// errors it marks covered by declarative validation, followed by those of
// the declarative rules themselves (declarativePLCSpec).
func validatePLCSpec(name string, spec *flowcontrolv1.PriorityLevelConfigurationSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if e := spec.Exempt; e != nil {
			allErrs = append(allErrs, validateShares(e.NominalConcurrencyShares, e.LendablePercent, fldPath.Child("exempt"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Limited != nil {
			allErrs = append(allErrs, validateLimited(spec.Limited, fldPath.Child("limited"))...)
		}
	case "":
		// Required: declarative.
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), spec.Type, supportedPLTypes))
	}
	return append(allErrs, declarativePLCSpec(spec, fldPath)...)
}

// declarativePLCSpec returns the errors of the beta declarative rules on a
// priority level's spec (k8s.io/kubernetes@v1.37.2
// pkg/apis/flowcontrol/v1/zz_generated.validations.go), which replace the
// handwritten ones upstream marks covered: the unions of exempt and
// limited with type (a member set for another type is Forbidden, limited
// is Required for Limited), type and limitResponse.type Required, and
// limitResponse's union of queuing with its type. They walk limited
// whatever the type. The generic store puts them last, in this order
// (the unions are checked at the type level, before the fields).
func declarativePLCSpec(spec *flowcontrolv1.PriorityLevelConfigurationSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Type != flowcontrolv1.PriorityLevelEnablementExempt && spec.Exempt != nil {
		errs = append(errs, declarative.Forbidden(fldPath.Child("exempt")))
	}
	switch {
	case spec.Type == flowcontrolv1.PriorityLevelEnablementLimited && spec.Limited == nil:
		errs = append(errs, declarative.Required(fldPath.Child("limited")))
	case spec.Type != flowcontrolv1.PriorityLevelEnablementLimited && spec.Limited != nil:
		errs = append(errs, declarative.Forbidden(fldPath.Child("limited")))
	}
	if spec.Type == "" {
		errs = append(errs, declarative.Required(fldPath.Child("type")))
	}
	if spec.Limited != nil {
		lr := &spec.Limited.LimitResponse
		lrPath := fldPath.Child("limited", "limitResponse")
		switch {
		case lr.Type == flowcontrolv1.LimitResponseTypeQueue && lr.Queuing == nil:
			errs = append(errs, declarative.Required(lrPath.Child("queuing")))
		case lr.Type != flowcontrolv1.LimitResponseTypeQueue && lr.Queuing != nil:
			errs = append(errs, declarative.Forbidden(lrPath.Child("queuing")))
		}
		if lr.Type == "" {
			errs = append(errs, declarative.Required(lrPath.Child("type")))
		}
	}
	return errs
}

func validateShares(shares, lendable *int32, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if shares != nil && *shares < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nominalConcurrencyShares"), *shares, "must be a non-negative integer"))
	}
	if lendable != nil && (*lendable < 0 || *lendable > 100) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("lendablePercent"), *lendable, "must be between 0 and 100, inclusive"))
	}
	return allErrs
}

// validateLimited is upstream's ValidateLimitedPriorityLevelConfiguration
// and ValidateLimitResponse, in their order, without the covered errors.
func validateLimited(l *flowcontrolv1.LimitedPriorityLevelConfiguration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s := l.NominalConcurrencyShares; s != nil && *s < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nominalConcurrencyShares"), *s, "must be a non-negative integer"))
	}
	lrPath := fldPath.Child("limitResponse")
	switch l.LimitResponse.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		// A queuing section is Forbidden: declarative.
	case flowcontrolv1.LimitResponseTypeQueue:
		if l.LimitResponse.Queuing != nil {
			allErrs = append(allErrs, validateQueuing(l.LimitResponse.Queuing, lrPath.Child("queuing"))...)
		}
	case "":
		// Required: declarative.
	default:
		allErrs = append(allErrs, field.NotSupported(lrPath.Child("type"), l.LimitResponse.Type, supportedLimitResponseTypes))
	}
	if p := l.LendablePercent; p != nil && (*p < 0 || *p > 100) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("lendablePercent"), *p, "must be between 0 and 100, inclusive"))
	}
	if l.BorrowingLimitPercent != nil && *l.BorrowingLimitPercent < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("borrowingLimitPercent"), *l.BorrowingLimitPercent, "if specified, must be a non-negative integer"))
	}
	return allErrs
}

// maxQueues is upstream's priorityLevelConfigurationQueuingMaxQueues.
const maxQueues = 10 * 1000 * 1000

// validateQueuing is upstream's ValidatePriorityLevelQueuingConfiguration.
func validateQueuing(q *flowcontrolv1.QueuingConfiguration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	switch {
	case q.HandSize <= 0:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("handSize"), q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("handSize"), q.HandSize,
			fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	default:
		if msg := entropyError(q.Queues, q.HandSize); msg != "" {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("handSize"), q.HandSize, msg))
		}
	}
	return allErrs
}

// entropyError is upstream shufflesharding.ValidateParameters' message
// when a hand of handSize cards from deckSize needs more than 60 bits.
func entropyError(deckSize, handSize int32) string {
	if handSize <= 0 || deckSize <= 0 {
		return ""
	}
	bits := math.Log2(float64(deckSize)) * float64(handSize)
	if bits > maxHashBits {
		return fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", deckSize, handSize, maxHashBits)
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
