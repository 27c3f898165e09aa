package audit

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Attributes are what a policy rule matches a request on.
type Attributes struct {
	User   string
	Groups []string
	Verb   string
	// IsResourceRequest: the rest is about a resource; else Path is.
	IsResourceRequest bool
	Namespace         string
	APIGroup          string
	Resource          string
	Subresource       string
	Name              string
	Path              string
}

// PolicyEvaluator decides how a request is audited.
type PolicyEvaluator interface {
	EvaluatePolicyRule(a Attributes) Policy
}

// EvaluatePolicyRule makes a fixed Policy a PolicyEvaluator: every request
// gets it.
func (p Policy) EvaluatePolicyRule(Attributes) Policy { return p }

// PolicyFile is an audit.k8s.io/v1 Policy (--audit-policy-file); field names
// are upstream's.
type PolicyFile struct {
	APIVersion        string       `json:"apiVersion"`
	Kind              string       `json:"kind"`
	Metadata          any          `json:"metadata,omitempty"`
	Rules             []PolicyRule `json:"rules"`
	OmitStages        []Stage      `json:"omitStages,omitempty"`
	OmitManagedFields bool         `json:"omitManagedFields,omitempty"`
}

// PolicyRule is one rule of a Policy: the first rule that matches a
// request gives its level.
type PolicyRule struct {
	Level             Level            `json:"level"`
	Users             []string         `json:"users,omitempty"`
	UserGroups        []string         `json:"userGroups,omitempty"`
	Verbs             []string         `json:"verbs,omitempty"`
	Resources         []GroupResources `json:"resources,omitempty"`
	Namespaces        []string         `json:"namespaces,omitempty"`
	NonResourceURLs   []string         `json:"nonResourceURLs,omitempty"`
	OmitStages        []Stage          `json:"omitStages,omitempty"`
	OmitManagedFields *bool            `json:"omitManagedFields,omitempty"`
}

// GroupResources selects resources of one API group ("" is the core
// group). Resources may be "*", "resource/subresource", "*/subresource" or
// "resource/*".
type GroupResources struct {
	Group         string   `json:"group,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// LoadPolicyFile reads and validates --audit-policy-file.
func LoadPolicyFile(path string) (*PolicyFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read file path %q: %w", path, err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("failed decoding file %q: %w", path, err)
	}
	return p, nil
}

// ParsePolicy decodes and validates a Policy (YAML or JSON).
func ParsePolicy(data []byte) (*PolicyFile, error) {
	var p PolicyFile
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, err
	}
	if p.APIVersion != GroupVersion || p.Kind != "Policy" {
		return nil, fmt.Errorf("unsupported policy %s, Kind=%s (want %s, Kind=Policy)", p.APIVersion, p.Kind, GroupVersion)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if len(p.Rules) == 0 {
		return nil, errors.New("loaded illegal policy with 0 rules")
	}
	return &p, nil
}

var validStages = []Stage{StageRequestReceived, StageResponseStarted, StageResponseComplete, StagePanic}

// validate checks the policy as upstream's audit validation does (field
// paths and messages after apiserver/pkg/apis/audit/validation).
func (p *PolicyFile) validate() error {
	var errs []error
	errs = append(errs, validateStages(p.OmitStages, "omitStages")...)
	for i, r := range p.Rules {
		path := fmt.Sprintf("rules[%d]", i)
		if _, ok := levelOrder[r.Level]; !ok {
			errs = append(errs, fmt.Errorf("%s.level: Unsupported value: %q: supported values: \"None\", \"Metadata\", \"Request\", \"RequestResponse\"", path, r.Level))
		}
		if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
			errs = append(errs, fmt.Errorf("%s.nonResourceURLs: Invalid value: %q: rules cannot apply to both regular resources and non-resource URLs", path, r.NonResourceURLs))
		}
		for j, u := range r.NonResourceURLs {
			if i := strings.Index(u, "*"); i >= 0 && i != len(u)-1 {
				errs = append(errs, fmt.Errorf("%s.nonResourceURLs[%d]: Invalid value: %q: non-resource URL rules may only use wildcards ('*') at the end", path, j, u))
			}
		}
		for j, gr := range r.Resources {
			if strings.Contains(gr.Group, "/") {
				errs = append(errs, fmt.Errorf("%s.resources[%d].group: Invalid value: %q: group name cannot contain '/'", path, j, gr.Group))
			}
			if len(gr.ResourceNames) > 0 {
				for k, res := range gr.Resources {
					if strings.Contains(res, "*") {
						errs = append(errs, fmt.Errorf("%s.resources[%d].resources[%d]: Invalid value: %q: resourceNames cannot be used with wildcard resources", path, j, k, res))
					}
				}
			}
		}
		errs = append(errs, validateStages(r.OmitStages, path+".omitStages")...)
	}
	return errors.Join(errs...)
}

func validateStages(stages []Stage, path string) []error {
	var errs []error
	for i, s := range stages {
		if !slices.Contains(validStages, s) {
			errs = append(errs, fmt.Errorf("%s[%d]: Unsupported value: %q: supported values: \"RequestReceived\", \"ResponseStarted\", \"ResponseComplete\", \"Panic\"", path, i, s))
		}
	}
	return errs
}

// ruleEvaluator evaluates a PolicyFile.
type ruleEvaluator struct {
	rules []PolicyRule
	// omitStages and omitManagedFields apply to requests no rule matches.
	omitStages        []Stage
	omitManagedFields bool
}

// NewPolicyEvaluator returns the evaluator of p: rules in order, the first
// match wins; no match is level None. The policy's omitStages are added to
// every rule's, as upstream's NewPolicyRuleEvaluator does.
func NewPolicyEvaluator(p *PolicyFile) PolicyEvaluator {
	e := &ruleEvaluator{omitStages: p.OmitStages, omitManagedFields: p.OmitManagedFields}
	for _, r := range p.Rules {
		r.OmitStages = unionStages(p.OmitStages, r.OmitStages)
		e.rules = append(e.rules, r)
	}
	return e
}

func unionStages(a, b []Stage) []Stage {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// EvaluatePolicyRule implements PolicyEvaluator.
func (e *ruleEvaluator) EvaluatePolicyRule(a Attributes) Policy {
	for i := range e.rules {
		r := &e.rules[i]
		if r.matches(a) {
			omit := e.omitManagedFields
			if r.OmitManagedFields != nil {
				omit = *r.OmitManagedFields
			}
			return Policy{Level: r.Level, OmitStages: r.OmitStages, OmitManagedFields: omit}
		}
	}
	return Policy{Level: LevelNone, OmitStages: e.omitStages, OmitManagedFields: e.omitManagedFields}
}

func (r *PolicyRule) matches(a Attributes) bool {
	if len(r.Users) > 0 && !slices.Contains(r.Users, a.User) {
		return false
	}
	if len(r.UserGroups) > 0 && !slices.ContainsFunc(a.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
		return false
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return r.matchesResource(a)
	}
	if len(r.NonResourceURLs) > 0 {
		return r.matchesNonResource(a)
	}
	return true
}

func (r *PolicyRule) matchesNonResource(a Attributes) bool {
	if a.IsResourceRequest {
		return false
	}
	for _, spec := range r.NonResourceURLs {
		if spec == "*" || spec == a.Path || (strings.HasSuffix(spec, "*") && strings.HasPrefix(a.Path, strings.TrimRight(spec, "*"))) {
			return true
		}
	}
	return false
}

func (r *PolicyRule) matchesResource(a Attributes) bool {
	if !a.IsResourceRequest {
		return false
	}
	// Cluster-scoped resources have the namespace "".
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != a.APIGroup {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, a.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == combined || res == "*":
				return true
			case a.Subresource != "" && strings.HasPrefix(res, "*/") && a.Subresource == strings.TrimPrefix(res, "*/"):
				return true
			case strings.HasSuffix(res, "/*") && a.Resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}
