package resource

import (
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// deviceTaintEffects are the effects a taint may have, sorted as
// upstream's sets.List(validDeviceTaintEffects) lists them.
var deviceTaintEffects = func() []resourcev1.DeviceTaintEffect {
	e := []resourcev1.DeviceTaintEffect{resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNone}
	slices.Sort(e)
	return e
}()

// ValidateDeviceTaintRule validates a rule on create (upstream's
// ValidateDeviceTaintRule; the store has validated the metadata).
func ValidateDeviceTaintRule(r *resourcev1.DeviceTaintRule) field.ErrorList {
	return validateDeviceTaintRuleSpec(&r.Spec, nil, field.NewPath("spec"))
}

// ValidateDeviceTaintRuleUpdate validates an update of the main resource:
// the spec is mutable (a change bumps the generation); an unchanged effect
// is not checked again.
func ValidateDeviceTaintRuleUpdate(r, old *resourcev1.DeviceTaintRule) field.ErrorList {
	return validateDeviceTaintRuleSpec(&r.Spec, &old.Spec, field.NewPath("spec"))
}

// ValidateDeviceTaintRuleStatusUpdate validates an update through /status:
// valid conditions, at most DeviceTaintRuleStatusMaxConditions of them.
func ValidateDeviceTaintRuleStatusUpdate(r, _ *resourcev1.DeviceTaintRule) field.ErrorList {
	p := field.NewPath("status", "conditions")
	errs := metav1validation.ValidateConditions(r.Status.Conditions, p)
	if n := len(r.Status.Conditions); n > resourcev1.DeviceTaintRuleStatusMaxConditions {
		errs = append(errs, field.TooMany(p, n, resourcev1.DeviceTaintRuleStatusMaxConditions))
	}
	return errs
}

func validateDeviceTaintRuleSpec(spec, old *resourcev1.DeviceTaintRuleSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sel := spec.DeviceSelector; sel != nil {
		sp := p.Child("deviceSelector")
		if sel.Driver != nil {
			errs = append(errs, dnsSubdomain(*sel.Driver, sp.Child("driver"))...)
		}
		if sel.Pool != nil {
			if *sel.Pool == "" {
				errs = append(errs, field.Required(sp.Child("pool"), ""))
			}
			for _, part := range strings.Split(*sel.Pool, "/") {
				if *sel.Pool != "" {
					errs = append(errs, dnsSubdomain(part, sp.Child("pool"))...)
				}
			}
		}
		if sel.Device != nil {
			errs = append(errs, dnsLabel(*sel.Device, sp.Child("device"))...)
		}
	}
	tp := p.Child("taint")
	t := spec.Taint
	// Includes the check for an empty key.
	errs = append(errs, metav1validation.ValidateLabelName(t.Key, tp.Child("key"))...)
	if t.Value != "" {
		for _, m := range utilvalidation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(tp.Child("value"), t.Value, m))
		}
	}
	if old == nil || old.Taint.Effect != t.Effect {
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(tp.Child("effect"), ""))
		case !slices.Contains(deviceTaintEffects, t.Effect):
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, deviceTaintEffects))
		}
	}
	return errs
}
