package flowcontrol

import (
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/bootstrap"
)

func causes(errs field.ErrorList) string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field+": "+e.Detail)
	}
	return strings.Join(out, "; ")
}

func validFS() *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "fs"}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "pl"},
		MatchingPrecedence:         500,
		DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "u"}}},
			ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, Namespaces: []string{"*"}}},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
		}},
	}}
}

func validPL() *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "pl"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](10), LendablePercent: ptr.To[int32](0),
			LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 8, QueueLengthLimit: 50}}},
	}}
}

// The errors users hit most, with upstream's field paths and messages
// (kubernetes/kubernetes pkg/apis/flowcontrol/validation/validation.go).
func TestValidateFlowSchema(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*flowcontrolv1.FlowSchema)
		want   string
	}{
		{"valid", func(*flowcontrolv1.FlowSchema) {}, ""},
		{"precedence zero", func(f *flowcontrolv1.FlowSchema) { f.Spec.MatchingPrecedence = 0 }, "FieldValueInvalid spec.matchingPrecedence: must be a positive value"},
		{"precedence too big", func(f *flowcontrolv1.FlowSchema) { f.Spec.MatchingPrecedence = 10001 }, "FieldValueInvalid spec.matchingPrecedence: must not be greater than 10000"},
		{"bad distinguisher", func(f *flowcontrolv1.FlowSchema) { f.Spec.DistinguisherMethod.Type = "ByGroup" },
			`FieldValueNotSupported spec.distinguisherMethod.type: supported values: "ByNamespace", "ByUser"`},
		{"no level", func(f *flowcontrolv1.FlowSchema) { f.Spec.PriorityLevelConfiguration.Name = "" }, "FieldValueRequired spec.priorityLevelConfiguration.name: must reference a priority level"},
		{"no subjects", func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].Subjects = nil }, "FieldValueRequired spec.rules[0].subjects: subjects must contain at least one value"},
		{"no rules", func(f *flowcontrolv1.FlowSchema) {
			f.Spec.Rules[0].ResourceRules, f.Spec.Rules[0].NonResourceRules = nil, nil
		}, "FieldValueRequired spec.rules[0]: at least one of resourceRules and nonResourceRules has to be non-empty"},
		{"user without user", func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].Subjects[0].User = nil },
			"FieldValueRequired spec.rules[0].subjects[0].user: user is required when subject kind is 'User'"},
		{"bad kind", func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].Subjects[0] = flowcontrolv1.Subject{Kind: "Robot"} },
			// kube-apiserver v1.37.2 lists them sorted.
			`FieldValueNotSupported spec.rules[0].subjects[0].kind: supported values: "Group", "ServiceAccount", "User"`},
		{"verbs star and more", func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].ResourceRules[0].Verbs = []string{"*", "get"} },
			"FieldValueInvalid spec.rules[0].resourceRules[0].verbs: if '*' is present, must not specify other verbs"},
		{"no verbs", func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].NonResourceRules[0].Verbs = nil },
			"FieldValueRequired spec.rules[0].nonResourceRules[0].verbs: verbs must contain at least one value"},
		{"no api groups", func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].ResourceRules[0].APIGroups = nil },
			"FieldValueRequired spec.rules[0].resourceRules[0].apiGroups: resource rules must supply at least one api group"},
		{"no namespaces", func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].ResourceRules[0].Namespaces = nil },
			"FieldValueRequired spec.rules[0].resourceRules[0].namespaces: resource rules that are not cluster scoped must supply at least one namespace"},
		{"url without slash", func(f *flowcontrolv1.FlowSchema) {
			f.Spec.Rules[0].NonResourceRules[0].NonResourceURLs = []string{"healthz"}
		},
			"FieldValueInvalid spec.rules[0].nonResourceURLs[0]: must start with slash"},
		{"mandatory changed", func(f *flowcontrolv1.FlowSchema) { f.Name = "exempt" }, "FieldValueInvalid spec: spec of 'exempt' must equal the fixed value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := validFS()
			tc.mutate(fs)
			got := causes(ValidateFlowSchema(fs))
			if tc.name == "url without slash" {
				tc.want = strings.Replace(tc.want, "spec.rules[0].nonResourceURLs", "spec.rules[0].nonResourceRules[0].nonResourceURLs", 1)
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	for _, fs := range append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...) {
		if errs := ValidateFlowSchema(fs); len(errs) > 0 {
			t.Errorf("bootstrap %s: %v", fs.Name, errs)
		}
	}
}

func TestValidatePriorityLevelConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*flowcontrolv1.PriorityLevelConfiguration)
		want   string
	}{
		{"valid", func(*flowcontrolv1.PriorityLevelConfiguration) {}, ""},
		{"negative shares", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](-1)
		},
			"FieldValueInvalid spec.limited.nominalConcurrencyShares: must be a non-negative integer"},
		{"lendable over 100", func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Spec.Limited.LendablePercent = ptr.To[int32](101) },
			"FieldValueInvalid spec.limited.lendablePercent: must be between 0 and 100, inclusive"},
		{"negative borrowing", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.BorrowingLimitPercent = ptr.To[int32](-1)
		},
			"FieldValueInvalid spec.limited.borrowingLimitPercent: if specified, must be a non-negative integer"},
		{"limited missing", func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Spec.Limited = nil },
			"FieldValueRequired spec.limited: "},
		{"bad type", func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Spec.Type = "Open" },
			`FieldValueNotSupported spec.type: supported values: "Exempt", "Limited"; FieldValueForbidden spec.limited: `},
		{"exempt type on another name", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec = flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt}
		}, "FieldValueInvalid spec.type: must be 'Exempt' if and only if `name` is 'exempt'"},
		{"queue without queuing", func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Spec.Limited.LimitResponse.Queuing = nil },
			"FieldValueRequired spec.limited.limitResponse.queuing: "},
		{"reject with queuing", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.LimitResponse.Type = flowcontrolv1.LimitResponseTypeReject
		}, "FieldValueForbidden spec.limited.limitResponse.queuing: "},
		{"hand bigger than deck", func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Spec.Limited.LimitResponse.Queuing.HandSize = 65 },
			"FieldValueInvalid spec.limited.limitResponse.queuing.handSize: should not be greater than queues (64)"},
		{"too much entropy", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.LimitResponse.Queuing.Queues, p.Spec.Limited.LimitResponse.Queuing.HandSize = 512, 10
		}, "FieldValueInvalid spec.limited.limitResponse.queuing.handSize: required entropy bits of deckSize 512 and handSize 10 should not be greater than 60"},
		{"hand bigger than a single queue", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.LimitResponse.Queuing.Queues, p.Spec.Limited.LimitResponse.Queuing.HandSize = 1, 2
		}, "FieldValueInvalid spec.limited.limitResponse.queuing.handSize: should not be greater than queues (1)"},
		{"too many queues", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.LimitResponse.Queuing.Queues, p.Spec.Limited.LimitResponse.Queuing.HandSize = 20000000, 1
		}, "FieldValueInvalid spec.limited.limitResponse.queuing.queues: must not be greater than 10000000"},
		{"zero queue length", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.LimitResponse.Queuing.QueueLengthLimit = 0
		},
			"FieldValueInvalid spec.limited.limitResponse.queuing.queueLengthLimit: must be positive"},
		{"mandatory changed", func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Name = "catch-all" },
			"FieldValueInvalid spec: spec of 'catch-all' except the 'spec.exempt' field must equal the fixed value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := validPL()
			tc.mutate(pl)
			if got := causes(ValidatePriorityLevelConfiguration(pl)); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	for _, pl := range append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...) {
		if errs := ValidatePriorityLevelConfiguration(pl); len(errs) > 0 {
			t.Errorf("bootstrap %s: %v", pl.Name, errs)
		}
	}
	// The exempt level's exempt section may be tuned.
	ex := bootstrap.MandatoryPriorityLevelConfigurations()[1]
	ex.Spec.Exempt.NominalConcurrencyShares = ptr.To[int32](10)
	if errs := ValidatePriorityLevelConfiguration(ex); len(errs) > 0 {
		t.Errorf("tuned exempt: %v", errs)
	}
}

// TestDistinguisherValue: upstream's NotSupported holds the whole method
// (kube-apiserver v1.37.2 answered Unsupported value: {"Type":"Bogus"},
// the internal type as the generic store renders it).
func TestDistinguisherValue(t *testing.T) {
	fs := validFS()
	fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: "Bogus"}
	errs := ValidateFlowSchema(fs)
	if len(errs) != 1 || errs[0].BadValue != any(fs.Spec.DistinguisherMethod) {
		t.Fatalf("got %v", errs)
	}
}
