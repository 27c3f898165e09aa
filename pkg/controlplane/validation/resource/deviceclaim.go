package resource

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// ValidateDeviceClaim validates a claim's (or a template's) device
// requests, constraints and configuration as kube-apiserver v1.37 does:
// upstream's handwritten validateDeviceClaim (k8s.io/kubernetes@v1.37.2
// pkg/apis/resource/validation) without the errors it marks covered by
// declarative validation, then the errors of the beta declarative rules
// (pkg/apis/resource/v1/zz_generated.validations.go), which the generic
// store lists last in the generated validators' order.
func ValidateDeviceClaim(c *resourcev1.DeviceClaim, p *field.Path) field.ErrorList {
	errs := validateDeviceClaim(c, p)
	return append(errs, declarativeDeviceClaim(c, p)...)
}

// requestNames are a claim's request names and, for each request with
// subrequests, theirs (upstream's gatherRequestNames).
type requestNames map[string]map[string]bool

func (r requestNames) has(ref string) bool {
	segments := strings.Split(ref, "/")
	if len(segments) > 2 {
		return false
	}
	subs, ok := r[segments[0]]
	if !ok {
		return false
	}
	return len(segments) == 1 || subs[segments[1]]
}

func validateDeviceClaim(c *resourcev1.DeviceClaim, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := requestNames{}
	for _, r := range c.Requests {
		var subs map[string]bool
		if len(r.FirstAvailable) > 0 {
			subs = map[string]bool{}
			for _, s := range r.FirstAvailable {
				subs[s.Name] = true
			}
		}
		names[r.Name] = subs
	}
	// Sizes and uniqueness are declarative; too long a list is not looked
	// into.
	if rp := p.Child("requests"); len(c.Requests) <= maxRequests {
		for i := range c.Requests {
			errs = append(errs, validateDeviceRequest(&c.Requests[i], rp.Index(i))...)
		}
	}
	if cp := p.Child("constraints"); len(c.Constraints) <= maxConstraints {
		for i := range c.Constraints {
			errs = append(errs, validateDeviceConstraint(&c.Constraints[i], cp.Index(i), names)...)
		}
	}
	if gp := p.Child("config"); len(c.Config) <= maxConfigs {
		for i := range c.Config {
			cfg := &c.Config[i]
			ip := gp.Index(i)
			errs = append(errs, validateRequestRefs(cfg.Requests, names, ip.Child("requests"))...)
			errs = append(errs, validateOpaque(cfg.Opaque, ip, false)...)
		}
	}
	return errs
}

// shortName is upstream's ValidateDNS1123Label: the label's messages, also
// for an empty name.
func shortName(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, m := range utilvalidation.IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(p, v, m).WithOrigin("format=k8s-short-name"))
	}
	return errs
}

func validateDeviceRequest(r *resourcev1.DeviceRequest, p *field.Path) field.ErrorList {
	errs := shortName(r.Name, p.Child("name"))
	hasExactly, hasFirst := r.Exactly != nil, len(r.FirstAvailable) > 0
	switch {
	case !hasExactly && !hasFirst:
		errs = append(errs, field.Required(p, "exactly one of `exactly` or `firstAvailable` is required"))
	case hasExactly && hasFirst:
		errs = append(errs, field.Invalid(p, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case hasFirst:
		if len(r.FirstAvailable) <= maxSubRequests {
			fp := p.Child("firstAvailable")
			for j := range r.FirstAvailable {
				s := &r.FirstAvailable[j]
				sp := fp.Index(j)
				errs = append(errs, shortName(s.Name, sp.Child("name"))...)
				// deviceClassName: declarative.
				errs = append(errs, validateSelectors(s.Selectors, sp.Child("selectors"), false)...)
				errs = append(errs, validateAllocationMode(s.AllocationMode, s.Count, sp)...)
				errs = append(errs, validateTolerations(s.Tolerations, sp.Child("tolerations"))...)
			}
		}
	default:
		e := r.Exactly
		ep := p.Child("exactly")
		if e.DeviceClassName == "" {
			errs = append(errs, field.Required(ep.Child("deviceClassName"), ""))
		} else {
			for _, m := range utilvalidation.IsDNS1123Subdomain(e.DeviceClassName) {
				errs = append(errs, field.Invalid(ep.Child("deviceClassName"), e.DeviceClassName, m).WithOrigin("format=k8s-long-name"))
			}
		}
		errs = append(errs, validateSelectors(e.Selectors, ep.Child("selectors"), false)...)
		errs = append(errs, validateAllocationMode(e.AllocationMode, e.Count, ep)...)
		errs = append(errs, validateTolerations(e.Tolerations, ep.Child("tolerations"))...)
	}
	return errs
}

// validateAllocationMode: the count fits the mode. An unknown mode is the
// declarative enum's error (an empty one, which defaulting never leaves,
// stays upstream's handwritten Unsupported value).
func validateAllocationMode(mode resourcev1.DeviceAllocationMode, count int64, p *field.Path) field.ErrorList {
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			return field.ErrorList{field.Invalid(p.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode))}
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			return field.ErrorList{field.Invalid(p.Child("count"), count, "must be greater than zero")}
		}
	case "":
		return field.ErrorList{field.NotSupported(p.Child("allocationMode"), mode, []resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount})}
	}
	return nil
}

// validateTolerations is upstream's validateDeviceToleration for each
// toleration, without the covered key, operator and effect checks.
func validateTolerations(ts []resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		ip := p.Index(i)
		switch t.Operator {
		case resourcev1.DeviceTolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(ip.Child("value"), t.Value, "must be empty for operator `Exists`"))
			}
		case resourcev1.DeviceTolerationOpEqual:
			for _, m := range utilvalidation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(ip.Child("value"), t.Value, m))
			}
		}
	}
	return errs
}

// validateRequestRefs is upstream's validateRequestNameRef for each
// reference: at most one "/", each segment a request name, naming a request
// (or subrequest) of the claim. Size and uniqueness are declarative.
func validateRequestRefs(refs []string, names requestNames, p *field.Path) field.ErrorList {
	if len(refs) > maxRequests {
		return nil
	}
	const notFound = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
	var errs field.ErrorList
	for i, ref := range refs {
		ip := p.Index(i)
		segments := strings.Split(ref, "/")
		if len(segments) > 2 {
			errs = append(errs, field.Invalid(ip, ref, notFound))
			continue
		}
		for _, s := range segments {
			errs = append(errs, shortName(s, ip)...)
		}
		if !names.has(ref) {
			errs = append(errs, field.Invalid(ip, ref, notFound))
		}
	}
	return errs
}

func validateDeviceConstraint(c *resourcev1.DeviceConstraint, p *field.Path, names requestNames) field.ErrorList {
	errs := validateRequestRefs(c.Requests, names, p.Child("requests"))
	if c.MatchAttribute == nil && c.DistinctAttribute == nil {
		// Upstream's wording with DRAConsumableCapacity (beta, on).
		errs = append(errs, field.Required(p, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	}
	// The attributes' format is declarative.
	return errs
}

var (
	allocationModes    = []resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount}
	tolerationOps      = []resourcev1.DeviceTolerationOperator{resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists}
	tolerationEffects  = []resourcev1.DeviceTaintEffect{resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNone}
	sameRequestName    = func(a, b *resourcev1.DeviceRequest) bool { return a.Name == b.Name }
	sameSubRequestName = func(a, b *resourcev1.DeviceSubRequest) bool { return a.Name == b.Name }
	sameString         = func(a, b *string) bool { return *a == *b }
)

// declarativeDeviceClaim returns the errors of the beta declarative rules
// on a DeviceClaim, walking it as Validate_DeviceClaim does: a list's size
// (which stops there) and uniqueness before its items, both request forms
// whatever the handwritten checks say of them.
func declarativeDeviceClaim(c *resourcev1.DeviceClaim, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if rp := p.Child("requests"); len(c.Requests) > maxRequests {
		errs = append(errs, declarative.MaxItems(rp, len(c.Requests), maxRequests))
	} else {
		errs = append(errs, declarative.Unique(rp, c.Requests, sameRequestName)...)
		for i := range c.Requests {
			r := &c.Requests[i]
			ip := rp.Index(i)
			if e := r.Exactly; e != nil {
				ep := ip.Child("exactly")
				errs = append(errs, declarativeSelectors(e.Selectors, ep.Child("selectors"))...)
				errs = append(errs, declarativeAllocationMode(e.AllocationMode, ep.Child("allocationMode"))...)
				errs = append(errs, declarativeTolerations(e.Tolerations, ep.Child("tolerations"))...)
			}
			if fp := ip.Child("firstAvailable"); len(r.FirstAvailable) > maxSubRequests {
				errs = append(errs, declarative.MaxItems(fp, len(r.FirstAvailable), maxSubRequests))
			} else {
				errs = append(errs, declarative.Unique(fp, r.FirstAvailable, sameSubRequestName)...)
				for j := range r.FirstAvailable {
					s := &r.FirstAvailable[j]
					sp := fp.Index(j)
					if s.DeviceClassName == "" {
						errs = append(errs, declarative.Required(sp.Child("deviceClassName")))
					} else {
						errs = append(errs, declarative.LongName(sp.Child("deviceClassName"), s.DeviceClassName)...)
					}
					errs = append(errs, declarativeSelectors(s.Selectors, sp.Child("selectors"))...)
					errs = append(errs, declarativeAllocationMode(s.AllocationMode, sp.Child("allocationMode"))...)
					errs = append(errs, declarativeTolerations(s.Tolerations, sp.Child("tolerations"))...)
				}
			}
		}
	}
	if cp := p.Child("constraints"); len(c.Constraints) > maxConstraints {
		errs = append(errs, declarative.MaxItems(cp, len(c.Constraints), maxConstraints))
	} else {
		for i := range c.Constraints {
			con := &c.Constraints[i]
			ip := cp.Index(i)
			errs = append(errs, declarativeRequestRefs(con.Requests, ip.Child("requests"))...)
			if a := con.MatchAttribute; a != nil {
				errs = append(errs, declarative.ResourceFullyQualifiedName(ip.Child("matchAttribute"), string(*a))...)
			}
			if a := con.DistinctAttribute; a != nil {
				errs = append(errs, declarative.ResourceFullyQualifiedName(ip.Child("distinctAttribute"), string(*a))...)
			}
		}
	}
	if gp := p.Child("config"); len(c.Config) > maxConfigs {
		errs = append(errs, declarative.MaxItems(gp, len(c.Config), maxConfigs))
	} else {
		for i := range c.Config {
			cfg := &c.Config[i]
			ip := gp.Index(i)
			errs = append(errs, declarativeRequestRefs(cfg.Requests, ip.Child("requests"))...)
			if cfg.Opaque != nil {
				errs = append(errs, declarativeDriver(cfg.Opaque.Driver, ip.Child("opaque", "driver"))...)
			}
		}
	}
	return errs
}

// declarativeSelectors: at most 32 (the handwritten check covered by it
// stops there too, see validateSelectors).
func declarativeSelectors(sels []resourcev1.DeviceSelector, p *field.Path) field.ErrorList {
	if len(sels) > maxSelectors {
		return field.ErrorList{declarative.MaxItems(p, len(sels), maxSelectors)}
	}
	return nil
}

func declarativeAllocationMode(mode resourcev1.DeviceAllocationMode, p *field.Path) field.ErrorList {
	if mode == "" {
		return nil
	}
	return declarative.Enum(p, mode, allocationModes...)
}

func declarativeRequestRefs(refs []string, p *field.Path) field.ErrorList {
	if len(refs) > maxRequests {
		return field.ErrorList{declarative.MaxItems(p, len(refs), maxRequests)}
	}
	return declarative.Unique(p, refs, sameString)
}

// declarativeTolerations: key a label key when set, operator required and
// known, effect known when set (Validate_DeviceToleration).
func declarativeTolerations(ts []resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		ip := p.Index(i)
		if t.Key != "" {
			errs = append(errs, declarative.LabelKey(ip.Child("key"), t.Key)...)
		}
		if t.Operator == "" {
			errs = append(errs, declarative.Required(ip.Child("operator")))
		} else {
			errs = append(errs, declarative.Enum(ip.Child("operator"), t.Operator, tolerationOps...)...)
		}
		if t.Effect != "" {
			errs = append(errs, declarative.Enum(ip.Child("effect"), t.Effect, tolerationEffects...)...)
		}
	}
	return errs
}
