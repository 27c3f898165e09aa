package podsecurity

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Level is a Pod Security Standards level.
type Level string

// The levels, least restrictive first.
const (
	LevelPrivileged Level = "privileged"
	LevelBaseline   Level = "baseline"
	LevelRestricted Level = "restricted"
)

func (l Level) rank() int {
	switch l {
	case LevelBaseline:
		return 1
	case LevelRestricted:
		return 2
	}
	return 0
}

// Labels and annotations (k8s.io/pod-security-admission/api/constants.go).
const (
	labelPrefix         = "pod-security.kubernetes.io/"
	EnforceLevelLabel   = labelPrefix + "enforce"
	EnforceVersionLabel = labelPrefix + "enforce-version"
	AuditLevelLabel     = labelPrefix + "audit"
	AuditVersionLabel   = labelPrefix + "audit-version"
	WarnLevelLabel      = labelPrefix + "warn"
	WarnVersionLabel    = labelPrefix + "warn-version"

	// Audit annotations, as upstream writes them.
	AnnotationEnforcePolicy   = labelPrefix + "enforce-policy"
	AnnotationAuditViolations = labelPrefix + "audit-violations"
	AnnotationExempt          = labelPrefix + "exempt"
	AnnotationError           = labelPrefix + "error"
)

// Version is a policy version: v1.<minor>, or latest.
type Version struct {
	minor  int
	latest bool
}

// LatestVersion is "latest".
func LatestVersion() Version { return Version{latest: true} }

func (v Version) String() string {
	if v.latest {
		return "latest"
	}
	return fmt.Sprintf("v1.%d", v.minor)
}

// atLeast reports whether v is v1.minor or newer.
func (v Version) atLeast(minor int) bool { return v.latest || v.minor >= minor }

// ParseVersion parses "latest" or "v1.N", as upstream's api.ParseVersion;
// on error it returns latest.
func ParseVersion(s string) (Version, error) {
	if s == "latest" {
		return LatestVersion(), nil
	}
	rest, ok := strings.CutPrefix(s, "v1.")
	if !ok {
		return LatestVersion(), fmt.Errorf(`must be "latest" or "v1.x"`)
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return LatestVersion(), fmt.Errorf(`must be "latest" or "v1.x"`)
	}
	// As upstream, a version past the checks' newest evaluates as latest
	// but keeps its name.
	return Version{minor: n}, nil
}

// ParseLevel parses a level name; on error it returns restricted (upstream
// fails closed).
func ParseLevel(s string) (Level, error) {
	switch l := Level(s); l {
	case LevelPrivileged, LevelBaseline, LevelRestricted:
		return l, nil
	}
	return LevelRestricted, fmt.Errorf("must be one of privileged, baseline, restricted")
}

// LevelVersion is one mode's level and version.
type LevelVersion struct {
	Level   Level
	Version Version
}

// String is "<level>:<version>", as upstream's messages show it.
func (lv LevelVersion) String() string { return string(lv.Level) + ":" + lv.Version.String() }

// Policy is the level and version of each mode of a namespace.
type Policy struct {
	Enforce, Audit, Warn LevelVersion
}

// fullyPrivileged reports whether every mode is privileged (upstream's
// Policy.FullyPrivileged).
func (p Policy) fullyPrivileged() bool {
	return p.Enforce.Level == LevelPrivileged && p.Audit.Level == LevelPrivileged && p.Warn.Level == LevelPrivileged
}

// equivalent is upstream's Policy.Equivalent: same levels, and same
// versions where the level is not privileged (privileged ignores the
// version).
func (p Policy) equivalent(o Policy) bool {
	eq := func(a, b LevelVersion) bool {
		return a.Level == b.Level && (a.Level == LevelPrivileged || a.Version == b.Version)
	}
	return eq(p.Enforce, o.Enforce) && eq(p.Audit, o.Audit) && eq(p.Warn, o.Warn)
}

// policyFromLabels is upstream's api.PolicyToEvaluate: each mode from its
// labels, falling back to defaults. Invalid values yield errors (with
// their field paths); an invalid enforce level evaluates as restricted, an
// invalid audit or warn level as privileged, an invalid version as latest.
func policyFromLabels(labels map[string]string, defaults Policy) (Policy, field.ErrorList) {
	var errs field.ErrorList
	p := defaults
	path := field.NewPath("metadata", "labels")
	mode := func(levelKey, versionKey string, into *LevelVersion, failOpen bool) {
		if s, ok := labels[levelKey]; ok {
			l, err := ParseLevel(s)
			if err != nil {
				errs = append(errs, field.Invalid(path.Key(levelKey), s, err.Error()))
				if failOpen {
					l = LevelPrivileged
				}
			}
			into.Level = l
		}
		if s, ok := labels[versionKey]; ok {
			v, err := ParseVersion(s)
			if err != nil {
				errs = append(errs, field.Invalid(path.Key(versionKey), s, err.Error()))
			}
			into.Version = v
		}
	}
	mode(EnforceLevelLabel, EnforceVersionLabel, &p.Enforce, false)
	mode(AuditLevelLabel, AuditVersionLabel, &p.Audit, true)
	mode(WarnLevelLabel, WarnVersionLabel, &p.Warn, true)
	return p, errs
}

// Configuration is pod-security.admission.config.k8s.io/v1
// PodSecurityConfiguration, the plugin's entry of
// --admission-control-config-file.
type Configuration struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Defaults   ConfigDefaults `json:"defaults"`
	Exemptions ConfigExempt   `json:"exemptions"`
}

// ConfigDefaults are the levels and versions of namespaces without labels.
type ConfigDefaults struct {
	Enforce        string `json:"enforce"`
	EnforceVersion string `json:"enforce-version"`
	Audit          string `json:"audit"`
	AuditVersion   string `json:"audit-version"`
	Warn           string `json:"warn"`
	WarnVersion    string `json:"warn-version"`
}

// ConfigExempt lists what the plugin never checks.
type ConfigExempt struct {
	Usernames      []string `json:"usernames"`
	RuntimeClasses []string `json:"runtimeClasses"`
	Namespaces     []string `json:"namespaces"`
}

// config is a parsed Configuration.
type config struct {
	defaults                              Policy
	usernames, runtimeClasses, namespaces []string
}

// parseConfig parses and validates the plugin's configuration (nil: the
// defaults, privileged:latest everywhere and no exemptions), as upstream's
// v1 defaulting and validation do.
func parseConfig(data []byte) (config, error) {
	var c Configuration
	if len(data) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return config{}, fmt.Errorf("decoding PodSecurityConfiguration: %w", err)
		}
		switch c.APIVersion {
		case "pod-security.admission.config.k8s.io/v1", "pod-security.admission.config.k8s.io/v1beta1", "pod-security.admission.config.k8s.io/v1alpha1":
		default:
			return config{}, fmt.Errorf("PodSecurityConfiguration: apiVersion %q is not supported (want pod-security.admission.config.k8s.io/v1)", c.APIVersion)
		}
		if c.Kind != "PodSecurityConfiguration" {
			return config{}, fmt.Errorf("PodSecurityConfiguration: kind %q is not PodSecurityConfiguration", c.Kind)
		}
	}
	d := c.Defaults
	out := config{usernames: c.Exemptions.Usernames, runtimeClasses: c.Exemptions.RuntimeClasses, namespaces: c.Exemptions.Namespaces}
	// Upstream's ValidatePodSecurityConfiguration
	// (pod-security-admission/admission/api/validation/validation.go), after
	// defaulting empty levels to privileged and versions to latest: the
	// defaults in the order enforce, warn, audit; then the namespace,
	// runtime class and username exemptions, each invalid or duplicate.
	var errs field.ErrorList
	mode := func(name, level, version string) LevelVersion {
		lv := LevelVersion{LevelPrivileged, LatestVersion()}
		if level != "" {
			l, err := ParseLevel(level)
			if err != nil {
				errs = append(errs, field.Invalid(field.NewPath("defaults", name), level, err.Error()))
			}
			lv.Level = l
		}
		if version != "" {
			v, err := ParseVersion(version)
			if err != nil {
				errs = append(errs, field.Invalid(field.NewPath("defaults", name+"-version"), version, err.Error()))
			}
			lv.Version = v
		}
		return lv
	}
	out.defaults.Enforce = mode("enforce", d.Enforce, d.EnforceVersion)
	out.defaults.Warn = mode("warn", d.Warn, d.WarnVersion)
	out.defaults.Audit = mode("audit", d.Audit, d.AuditVersion)
	for _, list := range []struct {
		name     string
		vals     []string
		validate func(string) []string
	}{
		{"namespaces", out.namespaces, func(v string) []string { return apivalidation.ValidateNamespaceName(v, false) }},
		{"runtimeClasses", out.runtimeClasses, func(v string) []string { return apivalidation.NameIsDNSSubdomain(v, false) }},
		{"usernames", out.usernames, func(v string) []string {
			if v == "" {
				return []string{"username must not be empty"}
			}
			return nil
		}},
	} {
		seen := map[string]bool{}
		for i, v := range list.vals {
			path := field.NewPath("exemptions", list.name).Index(i)
			if msgs := list.validate(v); len(msgs) > 0 {
				errs = append(errs, field.Invalid(path, v, strings.Join(msgs, ", ")))
				continue
			}
			if seen[v] {
				errs = append(errs, field.Duplicate(path, v))
				continue
			}
			seen[v] = true
		}
	}
	if len(errs) > 0 {
		return config{}, fmt.Errorf("invalid PodSecurityConfiguration: %w", errs.ToAggregate())
	}
	return out, nil
}
