package resource

import (
	"encoding/json"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// Limits of upstream's types.go.
const (
	maxRequests        = resourcev1.DeviceRequestsMaxSize
	maxSubRequests     = resourcev1.FirstAvailableDeviceRequestMaxSize
	maxSelectors       = resourcev1.DeviceSelectorsMaxSize
	maxConstraints     = resourcev1.DeviceConstraintsMaxSize
	maxConfigs         = resourcev1.DeviceConfigMaxSize
	maxReservedFor     = resourcev1.ResourceClaimReservedForMaxSize
	maxDevicesPerSlice = resourcev1.ResourceSliceMaxDevices
	maxTolerations     = resourcev1.DeviceTolerationsMaxLength
	maxAttributes      = resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice
)

func dnsLabel(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, m := range utilvalidation.IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(p, v, m))
	}
	return errs
}

func dnsSubdomain(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, m := range utilvalidation.IsDNS1123Subdomain(v) {
		errs = append(errs, field.Invalid(p, v, m))
	}
	return errs
}

// validateSelectors is upstream's validateSelectorSlice without the size
// check it marks covered (declarativeSelectors): over 32 selectors are not
// looked into; each selector needs a CEL expression that compiles. stored
// skips the compilation (an unchanged, stored list).
func validateSelectors(sels []resourcev1.DeviceSelector, p *field.Path, stored bool) field.ErrorList {
	if len(sels) > maxSelectors {
		return nil
	}
	var errs field.ErrorList
	for i, s := range sels {
		ip := p.Index(i)
		if s.CEL == nil {
			errs = append(errs, field.Required(ip.Child("cel"), ""))
		} else if !stored {
			errs = append(errs, validateCELSelector(s.CEL.Expression, ip.Child("cel", "expression"))...)
		}
	}
	return errs
}

// validateOpaque is upstream's validateDeviceConfiguration: an opaque
// section is required; its parameters a JSON object (validateRawExtension).
// Its driver is checked by beta declarative rules (declarativeDriver).
func validateOpaque(o *resourcev1.OpaqueDeviceConfiguration, p *field.Path, stored bool) field.ErrorList {
	if o == nil {
		return field.ErrorList{field.Required(p.Child("opaque"), "")}
	}
	return validateRawExtension(o.Parameters.Raw, p.Child("opaque", "parameters"), stored, resourcev1.OpaqueParametersMaxLength)
}

// declarativeDriver returns the errors of the beta declarative rules on a
// driver name: Required alone when empty, else the caseless DNS subdomain
// format, then at most 63 characters.
func declarativeDriver(driver string, p *field.Path) field.ErrorList {
	if driver == "" {
		return field.ErrorList{declarative.Required(p)}
	}
	return append(declarative.LongNameCaseless(p, driver), declarative.MaxLength(p, driver, 63)...)
}

// validateRawExtension is upstream's: required, at most maxLength bytes on
// create (stored parameters are grandfathered), JSON, not null, an object.
func validateRawExtension(raw []byte, p *field.Path, stored bool, maxLength int) field.ErrorList {
	var v any
	switch {
	case len(raw) == 0:
		return field.ErrorList{field.Required(p, "")}
	case !stored && len(raw) > maxLength:
		return field.ErrorList{field.TooLong(p, "" /*unused*/, maxLength)}
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return field.ErrorList{field.Invalid(p, "<value omitted>", fmt.Sprintf("error parsing data as JSON: %v", err.Error()))}
	}
	if v == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, ok := v.(map[string]any); !ok {
		return field.ErrorList{field.Invalid(p, "<value omitted>", "must be a valid JSON object")}
	}
	return nil
}

// validateFullyQualifiedName: "<domain>/<name>".
func validateFullyQualifiedName(n resourcev1.FullyQualifiedName, p *field.Path) field.ErrorList {
	domain, name, ok := strings.Cut(string(n), "/")
	if !ok || domain == "" {
		return field.ErrorList{field.Required(p, "must include a domain")}
	}
	errs := dnsSubdomain(domain, p)
	errs = append(errs, validateIdentifier(name, p)...)
	return errs
}

// validateIdentifier: a C identifier of at most 32 characters (attribute
// and capacity names).
func validateIdentifier(id string, p *field.Path) field.ErrorList {
	if id == "" {
		return field.ErrorList{field.Required(p, "name required")}
	}
	var errs field.ErrorList
	if len(id) > resourcev1.DeviceMaxIDLength {
		errs = append(errs, field.TooLong(p, "" /*unused*/, resourcev1.DeviceMaxIDLength))
	}
	for _, m := range utilvalidation.IsCIdentifier(id) {
		errs = append(errs, field.Invalid(p, id, m))
	}
	return errs
}

// ValidateResourceClaim validates a claim's spec.
func ValidateResourceClaim(c *resourcev1.ResourceClaim) field.ErrorList {
	return ValidateDeviceClaim(&c.Spec.Devices, field.NewPath("spec", "devices"))
}

// ValidateResourceClaimUpdate: the spec is immutable.
//
// The spec's immutability is a beta declarative rule (+k8s:immutable,
// k8s.io/kubernetes@v1.37.2 pkg/apis/resource/v1/zz_generated.validations.go):
// "Invalid value: null", and the declarative walk of the spec stops there.
func ValidateResourceClaimUpdate(c, old *resourcev1.ResourceClaim) field.ErrorList {
	if !equality.Semantic.DeepEqual(c.Spec, old.Spec) {
		return field.ErrorList{declarative.Immutable(field.NewPath("spec"))}
	}
	return nil
}

// ValidateResourceClaimStatusUpdate validates a claim's status update.
func ValidateResourceClaimStatusUpdate(c, old *resourcev1.ResourceClaim) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("status")
	if old.Status.Allocation != nil && c.Status.Allocation != nil && !equality.Semantic.DeepEqual(c.Status.Allocation, old.Status.Allocation) {
		errs = append(errs, field.Invalid(sp.Child("allocation"), c.Status.Allocation, "field is immutable"))
	}
	rp := sp.Child("reservedFor")
	if len(c.Status.ReservedFor) > 0 && c.Status.Allocation == nil {
		errs = append(errs, field.Forbidden(rp, "may not be specified when `allocated` is not set"))
	}
	if len(c.Status.ReservedFor) > maxReservedFor {
		errs = append(errs, field.TooMany(rp, len(c.Status.ReservedFor), maxReservedFor))
	}
	uids := map[string]bool{}
	for i, r := range c.Status.ReservedFor {
		ip := rp.Index(i)
		if r.Resource == "" {
			errs = append(errs, field.Required(ip.Child("resource"), ""))
		}
		if r.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if r.UID == "" {
			errs = append(errs, field.Required(ip.Child("uid"), ""))
		} else if uids[string(r.UID)] {
			errs = append(errs, field.Duplicate(ip.Child("uid"), r.UID))
		}
		uids[string(r.UID)] = true
	}
	if len(old.Status.ReservedFor) > 0 && old.Status.Allocation != nil && c.Status.Allocation == nil && len(c.Status.ReservedFor) > 0 {
		errs = append(errs, field.Forbidden(sp.Child("allocation"), "may not be removed while reservedFor is set"))
	}
	return errs
}

// ValidateResourceClaimTemplate validates a template's claim spec.
func ValidateResourceClaimTemplate(t *resourcev1.ResourceClaimTemplate) field.ErrorList {
	return ValidateDeviceClaim(&t.Spec.Spec.Devices, field.NewPath("spec", "spec", "devices"))
}

// ValidateResourceClaimTemplateUpdate: the spec is immutable.
//
// Templates have no declarative immutability: the error is upstream's
// handwritten ValidateImmutableField on the internal type, whose value the
// generic store renders as that type marshals (internaljson).
func ValidateResourceClaimTemplateUpdate(t, old *resourcev1.ResourceClaimTemplate) field.ErrorList {
	if !equality.Semantic.DeepEqual(t.Spec, old.Spec) {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), t.Spec, "field is immutable")}
	}
	return nil
}

// ValidateDeviceClass validates a new class's spec as upstream's
// validateDeviceClassSpec (k8s.io/kubernetes@v1.37.2
// pkg/apis/resource/validation): selectors, configuration and the
// extended resource name, the latter's format a beta declarative rule
// (+k8s:format=k8s-extended-resource-name, in its words, last).
func ValidateDeviceClass(c *resourcev1.DeviceClass) field.ErrorList {
	return validateDeviceClassSpec(&c.Spec, nil)
}

// ValidateDeviceClassUpdate validates an updated class: selectors and
// configuration that did not change count as stored (CEL expressions are
// not compiled again, parameters not size-checked).
func ValidateDeviceClassUpdate(c, old *resourcev1.DeviceClass) field.ErrorList {
	return validateDeviceClassSpec(&c.Spec, &old.Spec)
}

func validateDeviceClassSpec(spec, old *resourcev1.DeviceClassSpec) field.ErrorList {
	sp := field.NewPath("spec")
	storedSelectors := old != nil && equality.Semantic.DeepEqual(spec.Selectors, old.Selectors)
	errs := validateSelectors(spec.Selectors, sp.Child("selectors"), storedSelectors)
	errs = append(errs, declarativeSelectors(spec.Selectors, sp.Child("selectors"))...)
	cp := sp.Child("config")
	if len(spec.Config) > maxConfigs {
		errs = append(errs, declarative.MaxItems(cp, len(spec.Config), maxConfigs))
	} else {
		storedConfig := old != nil && equality.Semantic.DeepEqual(spec.Config, old.Config)
		for i, cfg := range spec.Config {
			errs = append(errs, validateOpaque(cfg.Opaque, cp.Index(i), storedConfig)...)
			if cfg.Opaque != nil {
				errs = append(errs, declarativeDriver(cfg.Opaque.Driver, cp.Index(i).Child("opaque", "driver"))...)
			}
		}
	}
	if n := spec.ExtendedResourceName; n != nil {
		errs = append(errs, declarative.ExtendedResourceName(sp.Child("extendedResourceName"), *n)...)
	}
	return errs
}

// ValidateResourceSlice validates a slice.
func ValidateResourceSlice(s *resourcev1.ResourceSlice) field.ErrorList {
	sp := field.NewPath("spec")
	errs := dnsSubdomain(s.Spec.Driver, sp.Child("driver"))
	pp := sp.Child("pool")
	if s.Spec.Pool.Name == "" {
		errs = append(errs, field.Required(pp.Child("name"), ""))
	} else {
		for _, part := range strings.Split(s.Spec.Pool.Name, "/") {
			errs = append(errs, dnsSubdomain(part, pp.Child("name"))...)
		}
	}
	if s.Spec.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(pp.Child("generation"), s.Spec.Pool.Generation, "must be greater than or equal to zero"))
	}
	if s.Spec.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(pp.Child("resourceSliceCount"), s.Spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	set := 0
	if s.Spec.NodeName != nil {
		set++
		errs = append(errs, dnsSubdomain(*s.Spec.NodeName, sp.Child("nodeName"))...)
	}
	if s.Spec.NodeSelector != nil {
		set++
		if len(s.Spec.NodeSelector.NodeSelectorTerms) == 0 {
			errs = append(errs, field.Required(sp.Child("nodeSelector", "nodeSelectorTerms"), "must have at least one node selector term"))
		}
	}
	if s.Spec.AllNodes != nil && *s.Spec.AllNodes {
		set++
	}
	if s.Spec.PerDeviceNodeSelection != nil && *s.Spec.PerDeviceNodeSelection {
		set++
	}
	switch {
	case set == 0:
		errs = append(errs, field.Required(sp, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"))
	case set > 1:
		errs = append(errs, field.Invalid(sp, nil, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"))
	}
	dp := sp.Child("devices")
	if len(s.Spec.Devices) > maxDevicesPerSlice {
		errs = append(errs, field.TooMany(dp, len(s.Spec.Devices), maxDevicesPerSlice))
	}
	seen := map[string]bool{}
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		ip := dp.Index(i)
		errs = append(errs, dnsLabel(d.Name, ip.Child("name"))...)
		if seen[d.Name] && d.Name != "" {
			errs = append(errs, field.Duplicate(ip.Child("name"), d.Name))
		}
		seen[d.Name] = true
		if n := len(d.Attributes) + len(d.Capacity); n > maxAttributes {
			errs = append(errs, field.TooMany(ip, n, maxAttributes))
		}
		for name, a := range d.Attributes {
			ap := ip.Child("attributes").Key(string(name))
			errs = append(errs, validateQualifiedName(name, ap)...)
			errs = append(errs, validateAttributeUnion(a, ap)...)
		}
		for name := range d.Capacity {
			errs = append(errs, validateQualifiedName(name, ip.Child("capacity").Key(string(name)))...)
		}
		for j, taint := range d.Taints {
			tp := ip.Child("taints").Index(j)
			for _, m := range utilvalidation.IsQualifiedName(taint.Key) {
				errs = append(errs, field.Invalid(tp.Child("key"), taint.Key, m))
			}
			switch taint.Effect {
			case resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone:
			case "":
				errs = append(errs, field.Required(tp.Child("effect"), ""))
			default:
				errs = append(errs, field.NotSupported(tp.Child("effect"), taint.Effect, []resourcev1.DeviceTaintEffect{resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNone}))
			}
		}
	}
	return errs
}

// ValidateResourceSliceUpdate: driver, pool name and node name are
// immutable.
func ValidateResourceSliceUpdate(s, old *resourcev1.ResourceSlice) field.ErrorList {
	errs := ValidateResourceSlice(s)
	sp := field.NewPath("spec")
	if s.Spec.Driver != old.Spec.Driver {
		errs = append(errs, field.Invalid(sp.Child("driver"), s.Spec.Driver, "field is immutable"))
	}
	if s.Spec.Pool.Name != old.Spec.Pool.Name {
		errs = append(errs, field.Invalid(sp.Child("pool", "name"), s.Spec.Pool.Name, "field is immutable"))
	}
	if !equality.Semantic.DeepEqual(s.Spec.NodeName, old.Spec.NodeName) {
		errs = append(errs, field.Invalid(sp.Child("nodeName"), s.Spec.NodeName, "field is immutable"))
	}
	return errs
}

// validateQualifiedName: an identifier, optionally "<domain>/" before it.
func validateQualifiedName(n resourcev1.QualifiedName, p *field.Path) field.ErrorList {
	domain, id, ok := strings.Cut(string(n), "/")
	if !ok {
		return validateIdentifier(string(n), p)
	}
	errs := dnsSubdomain(domain, p)
	return append(errs, validateIdentifier(id, p)...)
}

// attributeMembers are a device attribute's union members in upstream's
// declarative order.
var attributeMembers = []string{"`int`", "`bool`", "`string`", "`version`", "`ints`", "`bools`", "`strings`", "`versions`"}

// validateAttributeUnion: exactly one value, in the words of the
// declarative union validation kube-apiserver v1.37.2 answers with
// (apimachinery validate.Union; checked on the reference).
func validateAttributeUnion(a resourcev1.DeviceAttribute, p *field.Path) field.ErrorList {
	var set []string
	for i, isSet := range []bool{a.IntValue != nil, a.BoolValue != nil, a.StringValue != nil, a.VersionValue != nil,
		a.IntValues != nil, a.BoolValues != nil, a.StringValues != nil, a.VersionValues != nil} {
		if isSet {
			set = append(set, strings.Trim(attributeMembers[i], "`"))
		}
	}
	switch len(set) {
	case 1:
		return nil
	case 0:
		return field.ErrorList{field.Invalid(p, "", "must specify one of: "+strings.Join(attributeMembers, ", "))}
	default:
		return field.ErrorList{field.Invalid(p, "{"+strings.Join(set, ", ")+"}", "must specify exactly one of: "+strings.Join(attributeMembers, ", "))}
	}
}
