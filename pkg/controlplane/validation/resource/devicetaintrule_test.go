package resource

import (
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func rule(mutate func(*resourcev1.DeviceTaintRule)) *resourcev1.DeviceTaintRule {
	r := &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "r"},
		Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To("gpu.example.com"), Pool: ptr.To("node-1"), Device: ptr.To("gpu-0")},
			Taint:          resourcev1.DeviceTaint{Key: "example.com/broken", Value: "yes", Effect: resourcev1.DeviceTaintEffectNoExecute},
		},
	}
	if mutate != nil {
		mutate(r)
	}
	return r
}

// Field paths and messages: upstream's pkg/apis/resource/validation
// (ValidateDeviceTaintRule, validateDeviceTaint, ValidateDeviceTaintRuleStatusUpdate;
// kubernetes, newest stored commit) and apimachinery's ValidateLabelName,
// IsValidLabelValue, ValidateConditions.
func TestValidateDeviceTaintRule(t *testing.T) {
	for name, tc := range map[string]struct {
		r    *resourcev1.DeviceTaintRule
		want string
	}{
		"valid":        {rule(nil), ""},
		"no selector":  {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.DeviceSelector = nil }), ""},
		"effect None":  {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNone }), ""},
		"no key":       {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.Taint.Key = "" }), `spec.taint.key: Invalid value: "": name part must be non-empty`},
		"bad key":      {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.Taint.Key = "a b" }), `spec.taint.key: Invalid value: "a b": name part must consist of alphanumeric characters`},
		"bad value":    {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.Taint.Value = "a b" }), `spec.taint.value: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters`},
		"no effect":    {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.Taint.Effect = "" }), "spec.taint.effect: Required value"},
		"bad effect":   {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.Taint.Effect = "Evict" }), `spec.taint.effect: Unsupported value: "Evict": supported values: "NoExecute", "NoSchedule", "None"`},
		"bad driver":   {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.DeviceSelector.Driver = ptr.To("GPU") }), `spec.deviceSelector.driver: Invalid value: "GPU": a lowercase RFC 1123 subdomain`},
		"empty driver": {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.DeviceSelector.Driver = ptr.To("") }), "spec.deviceSelector.driver: Required value"},
		"bad pool":     {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.DeviceSelector.Pool = ptr.To("a/B") }), `spec.deviceSelector.pool: Invalid value: "B": a lowercase RFC 1123 subdomain`},
		"bad device":   {rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.DeviceSelector.Device = ptr.To("gpu.0") }), `spec.deviceSelector.device: Invalid value: "gpu.0": must not contain dots`},
	} {
		t.Run(name, func(t *testing.T) {
			got := render(ValidateDeviceTaintRule(tc.r))
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateDeviceTaintRuleUpdates(t *testing.T) {
	// A stored unknown effect is not re-checked while unchanged.
	old := rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.Taint.Effect = "Legacy" })
	if got := render(ValidateDeviceTaintRuleUpdate(rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.Taint.Effect = "Legacy" }), old)); got != "" {
		t.Errorf("unchanged effect: %q", got)
	}
	if got := render(ValidateDeviceTaintRuleUpdate(rule(func(r *resourcev1.DeviceTaintRule) { r.Spec.Taint.Effect = "Other" }), old)); !strings.Contains(got, "spec.taint.effect: Unsupported value") {
		t.Errorf("changed effect: %q", got)
	}
	cond := func(typ string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Now()}
	}
	withConds := func(n int) *resourcev1.DeviceTaintRule {
		return rule(func(r *resourcev1.DeviceTaintRule) {
			for i := range n {
				r.Status.Conditions = append(r.Status.Conditions, cond("C"+string(rune('a'+i))))
			}
		})
	}
	if got := render(ValidateDeviceTaintRuleStatusUpdate(withConds(8), rule(nil))); got != "" {
		t.Errorf("8 conditions: %q", got)
	}
	if got := render(ValidateDeviceTaintRuleStatusUpdate(withConds(9), rule(nil))); !strings.Contains(got, "status.conditions: Too many: 9: must have at most 8 items") {
		t.Errorf("9 conditions: %q", got)
	}
	bad := rule(func(r *resourcev1.DeviceTaintRule) {
		r.Status.Conditions = []metav1.Condition{{Type: "EvictionInProgress", Status: "True"}}
	})
	if got := render(ValidateDeviceTaintRuleStatusUpdate(bad, rule(nil))); !strings.Contains(got, "status.conditions[0].reason: Required value") {
		t.Errorf("condition without reason: %q", got)
	}
}
