package oidc

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// AuthenticationConfiguration is apiserver.config.k8s.io/v1
// AuthenticationConfiguration (the parts kapi serves: jwt and anonymous).
type AuthenticationConfiguration struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	JWT        []JWTAuthenticator `json:"jwt"`
	Anonymous  *AnonymousConfig   `json:"anonymous,omitempty"`
}

// AnonymousConfig is the anonymous authenticator's configuration.
type AnonymousConfig struct {
	Enabled    bool                 `json:"enabled"`
	Conditions []AnonymousCondition `json:"conditions,omitempty"`
}

// AnonymousCondition allows anonymous requests to one path.
type AnonymousCondition struct {
	Path string `json:"path"`
}

// JWTAuthenticator is one issuer's configuration.
type JWTAuthenticator struct {
	Issuer               Issuer                `json:"issuer"`
	ClaimValidationRules []ClaimValidationRule `json:"claimValidationRules,omitempty"`
	ClaimMappings        ClaimMappings         `json:"claimMappings"`
	UserValidationRules  []UserValidationRule  `json:"userValidationRules,omitempty"`
}

// Issuer says where tokens come from and whom they are for.
type Issuer struct {
	URL                  string   `json:"url"`
	DiscoveryURL         string   `json:"discoveryURL,omitempty"`
	CertificateAuthority string   `json:"certificateAuthority,omitempty"`
	Audiences            []string `json:"audiences"`
	AudienceMatchPolicy  string   `json:"audienceMatchPolicy,omitempty"`
}

// ClaimValidationRule is a claim that must hold a value, or a CEL
// expression over claims that must be true.
type ClaimValidationRule struct {
	Claim         string `json:"claim,omitempty"`
	RequiredValue string `json:"requiredValue,omitempty"`
	Expression    string `json:"expression,omitempty"`
	Message       string `json:"message,omitempty"`
}

// ClaimMappings turn claims into the user.
type ClaimMappings struct {
	Username PrefixedClaimOrExpression `json:"username"`
	Groups   PrefixedClaimOrExpression `json:"groups,omitempty"`
	UID      ClaimOrExpression         `json:"uid,omitempty"`
	Extra    []ExtraMapping            `json:"extra,omitempty"`
}

// PrefixedClaimOrExpression is a claim with a prefix, or an expression.
type PrefixedClaimOrExpression struct {
	Claim      string  `json:"claim,omitempty"`
	Prefix     *string `json:"prefix,omitempty"`
	Expression string  `json:"expression,omitempty"`
}

// ClaimOrExpression is a claim or an expression.
type ClaimOrExpression struct {
	Claim      string `json:"claim,omitempty"`
	Expression string `json:"expression,omitempty"`
}

// ExtraMapping is one extra key and the expression of its values.
type ExtraMapping struct {
	Key             string `json:"key"`
	ValueExpression string `json:"valueExpression"`
}

// UserValidationRule is a CEL expression over the user that must be true.
type UserValidationRule struct {
	Expression string `json:"expression"`
	Message    string `json:"message,omitempty"`
}

// The audience match policy (the only one upstream has).
const AudienceMatchPolicyMatchAny = "MatchAny"

// LoadConfigFile reads and validates an --authentication-config file.
func LoadConfigFile(path string) (*AuthenticationConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, data)
}

// ParseConfig decodes and validates the content of an
// --authentication-config file (path names it in errors).
func ParseConfig(path string, data []byte) (*AuthenticationConfiguration, error) {
	var c AuthenticationConfiguration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	switch c.APIVersion {
	case "apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1alpha1":
	default:
		return nil, fmt.Errorf("%s: apiVersion %q is not apiserver.config.k8s.io/v1", path, c.APIVersion)
	}
	if c.Kind != "AuthenticationConfiguration" {
		return nil, fmt.Errorf("%s: kind %q is not AuthenticationConfiguration", path, c.Kind)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// Validate checks the configuration as upstream's validation does (the
// parts of it kapi needs to be safe; CEL expressions are compiled when the
// authenticators are built).
func (c *AuthenticationConfiguration) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, j := range c.JWT {
		p := fmt.Sprintf("jwt[%d]", i)
		u, err := url.Parse(j.Issuer.URL)
		switch {
		case j.Issuer.URL == "":
			errs = append(errs, fmt.Errorf("%s.issuer.url: Required value", p))
		case err != nil || u.Scheme != "https" || u.Host == "":
			errs = append(errs, fmt.Errorf("%s.issuer.url: Invalid value: %q: URL scheme must be https", p, j.Issuer.URL))
		case u.User != nil || u.RawQuery != "" || u.Fragment != "":
			errs = append(errs, fmt.Errorf("%s.issuer.url: Invalid value: %q: URL must not contain a username, password, query or fragment", p, j.Issuer.URL))
		}
		if seen[j.Issuer.URL] {
			errs = append(errs, fmt.Errorf("%s.issuer.url: Duplicate value: %q", p, j.Issuer.URL))
		}
		seen[j.Issuer.URL] = true
		if j.Issuer.DiscoveryURL != "" {
			if du, err := url.Parse(j.Issuer.DiscoveryURL); err != nil || du.Scheme != "https" || du.Host == "" {
				errs = append(errs, fmt.Errorf("%s.issuer.discoveryURL: Invalid value: %q: URL scheme must be https", p, j.Issuer.DiscoveryURL))
			}
		}
		if len(j.Issuer.Audiences) == 0 {
			errs = append(errs, fmt.Errorf("%s.issuer.audiences: Required value: at least one issuer.audiences is required", p))
		}
		if slices.Contains(j.Issuer.Audiences, "") {
			errs = append(errs, fmt.Errorf("%s.issuer.audiences: Invalid value: audience can't be empty", p))
		}
		if len(j.Issuer.Audiences) > 1 && j.Issuer.AudienceMatchPolicy != AudienceMatchPolicyMatchAny {
			errs = append(errs, fmt.Errorf("%s.issuer.audienceMatchPolicy: Invalid value: %q: audienceMatchPolicy must be MatchAny for multiple audiences", p, j.Issuer.AudienceMatchPolicy))
		}
		if j.Issuer.AudienceMatchPolicy != "" && j.Issuer.AudienceMatchPolicy != AudienceMatchPolicyMatchAny {
			errs = append(errs, fmt.Errorf("%s.issuer.audienceMatchPolicy: Unsupported value: %q", p, j.Issuer.AudienceMatchPolicy))
		}
		for k, r := range j.ClaimValidationRules {
			rp := fmt.Sprintf("%s.claimValidationRules[%d]", p, k)
			switch {
			case r.Claim != "" && r.Expression != "":
				errs = append(errs, fmt.Errorf("%s: Invalid value: claim and expression can't both be set", rp))
			case r.Claim == "" && r.Expression == "":
				errs = append(errs, fmt.Errorf("%s: Required value: claim or expression is required", rp))
			case r.Expression != "" && r.RequiredValue != "":
				errs = append(errs, fmt.Errorf("%s.requiredValue: Invalid value: requiredValue can't be set when expression is set", rp))
			}
		}
		m := j.ClaimMappings
		up := p + ".claimMappings.username"
		switch {
		case m.Username.Claim == "" && m.Username.Expression == "":
			errs = append(errs, fmt.Errorf("%s: Required value: claim or expression is required", up))
		case m.Username.Claim != "" && m.Username.Expression != "":
			errs = append(errs, fmt.Errorf("%s: Invalid value: claim and expression can't both be set", up))
		case m.Username.Claim != "" && m.Username.Prefix == nil:
			errs = append(errs, fmt.Errorf("%s.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing", up))
		case m.Username.Expression != "" && m.Username.Prefix != nil:
			errs = append(errs, fmt.Errorf("%s.prefix: Invalid value: prefix can't be set when expression is set", up))
		}
		gp := p + ".claimMappings.groups"
		switch {
		case m.Groups.Claim != "" && m.Groups.Expression != "":
			errs = append(errs, fmt.Errorf("%s: Invalid value: claim and expression can't both be set", gp))
		case m.Groups.Claim != "" && m.Groups.Prefix == nil:
			errs = append(errs, fmt.Errorf("%s.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing", gp))
		case m.Groups.Expression != "" && m.Groups.Prefix != nil:
			errs = append(errs, fmt.Errorf("%s.prefix: Invalid value: prefix can't be set when expression is set", gp))
		}
		if m.UID.Claim != "" && m.UID.Expression != "" {
			errs = append(errs, fmt.Errorf("%s.claimMappings.uid: Invalid value: claim and expression can't both be set", p))
		}
		keys := map[string]bool{}
		for k, e := range m.Extra {
			ep := fmt.Sprintf("%s.claimMappings.extra[%d]", p, k)
			switch {
			case e.Key == "":
				errs = append(errs, fmt.Errorf("%s.key: Required value", ep))
			case e.Key != strings.ToLower(e.Key):
				errs = append(errs, fmt.Errorf("%s.key: Invalid value: %q: key must be lowercase", ep, e.Key))
			case !strings.Contains(e.Key, "/"):
				errs = append(errs, fmt.Errorf("%s.key: Invalid value: %q: must be a domain-prefixed path (such as \"acme.io/foo\")", ep, e.Key))
			case keys[e.Key]:
				errs = append(errs, fmt.Errorf("%s.key: Duplicate value: %q", ep, e.Key))
			}
			keys[e.Key] = true
			if e.ValueExpression == "" {
				errs = append(errs, fmt.Errorf("%s.valueExpression: Required value: valueExpression is required", ep))
			}
		}
		for k, r := range j.UserValidationRules {
			if r.Expression == "" {
				errs = append(errs, fmt.Errorf("%s.userValidationRules[%d].expression: Required value: expression is required", p, k))
			}
		}
	}
	if c.Anonymous != nil && !c.Anonymous.Enabled && len(c.Anonymous.Conditions) > 0 {
		errs = append(errs, errors.New("anonymous.conditions: Invalid value: enabled should be set to true when conditions are defined"))
	}
	return errors.Join(errs...)
}

// FlagOptions are the --oidc-* flags.
type FlagOptions struct {
	IssuerURL      string
	ClientID       string
	CAFile         string
	UsernameClaim  string
	UsernamePrefix string
	GroupsClaim    string
	GroupsPrefix   string
	SigningAlgs    []string
	RequiredClaims map[string]string
}

// FromFlags is the jwt authenticator the --oidc-* flags describe, as
// upstream turns them into one: audiences [client-id]; the username claim
// prefixed with "<issuer>#" unless it is "email" or a prefix is given
// ("-" for none); required claims as claim validation rules.
func FromFlags(o FlagOptions) (JWTAuthenticator, error) {
	j := JWTAuthenticator{Issuer: Issuer{URL: o.IssuerURL, Audiences: []string{o.ClientID}, AudienceMatchPolicy: AudienceMatchPolicyMatchAny}}
	if o.CAFile != "" {
		ca, err := os.ReadFile(o.CAFile)
		if err != nil {
			return j, fmt.Errorf("--oidc-ca-file: %w", err)
		}
		j.Issuer.CertificateAuthority = string(ca)
	}
	claim := o.UsernameClaim
	if claim == "" {
		claim = "sub"
	}
	prefix := o.UsernamePrefix
	switch {
	case prefix == "-":
		prefix = ""
	case prefix == "" && claim != "email":
		prefix = o.IssuerURL + "#"
	}
	j.ClaimMappings.Username = PrefixedClaimOrExpression{Claim: claim, Prefix: &prefix}
	if o.GroupsClaim != "" {
		gp := o.GroupsPrefix
		j.ClaimMappings.Groups = PrefixedClaimOrExpression{Claim: o.GroupsClaim, Prefix: &gp}
	}
	keys := make([]string, 0, len(o.RequiredClaims))
	for k := range o.RequiredClaims {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		j.ClaimValidationRules = append(j.ClaimValidationRules, ClaimValidationRule{Claim: k, RequiredValue: o.RequiredClaims[k]})
	}
	return j, nil
}
