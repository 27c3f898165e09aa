package config

import (
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// Authorizer types.
const (
	TypeWebhook     = "Webhook"
	TypeRBAC        = "RBAC"
	TypeNode        = "Node"
	TypeAlwaysAllow = "AlwaysAllow"
	TypeAlwaysDeny  = "AlwaysDeny"
)

// Configuration is AuthorizationConfiguration.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`
	Authorizers     []Authorizer `json:"authorizers"`
}

// Authorizer is one entry of the chain.
type Authorizer struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Webhook *Webhook `json:"webhook,omitempty"`
}

// Webhook configures a webhook authorizer.
type Webhook struct {
	Timeout                                  metav1.Duration  `json:"timeout"`
	AuthorizedTTL                            metav1.Duration  `json:"authorizedTTL"`
	CacheAuthorizedRequests                  *bool            `json:"cacheAuthorizedRequests,omitempty"`
	UnauthorizedTTL                          metav1.Duration  `json:"unauthorizedTTL"`
	CacheUnauthorizedRequests                *bool            `json:"cacheUnauthorizedRequests,omitempty"`
	SubjectAccessReviewVersion               string           `json:"subjectAccessReviewVersion"`
	MatchConditionSubjectAccessReviewVersion string           `json:"matchConditionSubjectAccessReviewVersion"`
	FailurePolicy                            string           `json:"failurePolicy"`
	ConnectionInfo                           ConnectionInfo   `json:"connectionInfo"`
	MatchConditions                          []MatchCondition `json:"matchConditions"`
}

// ConnectionInfo says how to reach the webhook.
type ConnectionInfo struct {
	Type           string `json:"type"`
	KubeConfigFile string `json:"kubeConfigFile,omitempty"`
}

// MatchCondition is a CEL expression over `request`.
type MatchCondition struct {
	Expression string `json:"expression"`
}

// Load reads and validates file.
func Load(file string) (*Configuration, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--authorization-config: %w", err)
	}
	return Parse(file, data)
}

// Parse decodes and validates the content of file (named in errors).
func Parse(file string, data []byte) (*Configuration, error) {
	var c Configuration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("--authorization-config %s: %w", file, err)
	}
	if errs := Validate(&c); len(errs) > 0 {
		return nil, fmt.Errorf("--authorization-config %s: %w", file, errs.ToAggregate())
	}
	return &c, nil
}

// Validate checks c as upstream's ValidateAuthorizationConfiguration.
func Validate(c *Configuration) field.ErrorList {
	var errs field.ErrorList
	switch c.APIVersion {
	case "apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1alpha1":
	default:
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{"apiserver.config.k8s.io/v1"}))
	}
	if c.Kind != "AuthorizationConfiguration" {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{"AuthorizationConfiguration"}))
	}
	fld := field.NewPath("authorizers")
	if len(c.Authorizers) == 0 {
		errs = append(errs, field.Required(fld, "at least one authorization mode must be defined"))
	}
	seenTypes, seenNames := map[string]bool{}, map[string]bool{}
	for i, a := range c.Authorizers {
		p := fld.Index(i)
		switch a.Type {
		case TypeWebhook:
			if a.Webhook == nil {
				errs = append(errs, field.Required(p.Child("webhook"), "required when type=Webhook"))
			} else {
				errs = append(errs, validateWebhook(a.Webhook, p.Child("webhook"))...)
			}
		case TypeRBAC, TypeNode, TypeAlwaysAllow, TypeAlwaysDeny:
			if seenTypes[a.Type] {
				errs = append(errs, field.Duplicate(p.Child("type"), a.Type))
			}
			seenTypes[a.Type] = true
			if a.Webhook != nil {
				errs = append(errs, field.Invalid(p.Child("webhook"), "non-null", "may only be specified when type=Webhook"))
			}
		case "":
			errs = append(errs, field.Required(p.Child("type"), ""))
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), a.Type, []string{TypeAlwaysAllow, TypeAlwaysDeny, TypeNode, TypeRBAC, TypeWebhook}))
		}
		if a.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else if seenNames[a.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), a.Name))
		}
		seenNames[a.Name] = true
	}
	return errs
}

func validateWebhook(w *Webhook, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if w.Timeout.Duration == 0 {
		errs = append(errs, field.Required(fld.Child("timeout"), ""))
	} else if w.Timeout.Duration > 30*time.Second || w.Timeout.Duration < 0 {
		errs = append(errs, field.Invalid(fld.Child("timeout"), w.Timeout.Duration.String(), "must be > 0s and <= 30s"))
	}
	if w.AuthorizedTTL.Duration < 0 {
		errs = append(errs, field.Invalid(fld.Child("authorizedTTL"), w.AuthorizedTTL.Duration.String(), "must be > 0s"))
	}
	if w.UnauthorizedTTL.Duration < 0 {
		errs = append(errs, field.Invalid(fld.Child("unauthorizedTTL"), w.UnauthorizedTTL.Duration.String(), "must be > 0s"))
	}
	switch w.SubjectAccessReviewVersion {
	case "v1", "v1beta1":
	case "":
		errs = append(errs, field.Required(fld.Child("subjectAccessReviewVersion"), ""))
	default:
		errs = append(errs, field.NotSupported(fld.Child("subjectAccessReviewVersion"), w.SubjectAccessReviewVersion, []string{"v1", "v1beta1"}))
	}
	if len(w.MatchConditions) > 0 {
		switch w.MatchConditionSubjectAccessReviewVersion {
		case "v1":
		case "":
			errs = append(errs, field.Required(fld.Child("matchConditionSubjectAccessReviewVersion"), "required if match conditions are specified"))
		default:
			errs = append(errs, field.NotSupported(fld.Child("matchConditionSubjectAccessReviewVersion"), w.MatchConditionSubjectAccessReviewVersion, []string{"v1"}))
		}
	}
	switch w.FailurePolicy {
	case "Deny", "NoOpinion":
	case "":
		errs = append(errs, field.Required(fld.Child("failurePolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(fld.Child("failurePolicy"), w.FailurePolicy, []string{"NoOpinion", "Deny"}))
	}
	ci := fld.Child("connectionInfo")
	switch w.ConnectionInfo.Type {
	case "KubeConfigFile":
		if w.ConnectionInfo.KubeConfigFile == "" {
			errs = append(errs, field.Required(ci.Child("kubeConfigFile"), ""))
		}
	case "InClusterConfig":
		errs = append(errs, field.Invalid(ci.Child("type"), w.ConnectionInfo.Type, "InClusterConfig is not supported by kapi, which runs outside a cluster: use KubeConfigFile"))
	case "":
		errs = append(errs, field.Required(ci.Child("type"), ""))
	default:
		errs = append(errs, field.NotSupported(ci.Child("type"), w.ConnectionInfo.Type, []string{"InClusterConfig", "KubeConfigFile"}))
	}
	seen := map[string]bool{}
	for i, m := range w.MatchConditions {
		p := fld.Child("matchConditions").Index(i).Child("expression")
		if m.Expression == "" {
			errs = append(errs, field.Required(p, ""))
		} else if seen[m.Expression] {
			errs = append(errs, field.Duplicate(p, m.Expression))
		}
		seen[m.Expression] = true
	}
	return errs
}
