package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func validLimitRange() *corev1.LimitRange {
	return &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type:           corev1.LimitTypeContainer,
			Max:            rl("cpu", "800m", "memory", "1Gi"),
			Min:            rl("cpu", "200m"),
			Default:        rl("cpu", "800m", "memory", "512Mi"),
			DefaultRequest: rl("cpu", "200m", "memory", "256Mi"),
		}}},
	}
}

// The expected types, paths and messages are upstream's ValidateLimitRange
// (pkg/apis/core/validation/validation.go, kubernetes v1.37).
func TestValidateLimitRange(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.LimitRange)
		want   []string
	}{
		{"valid", func(*corev1.LimitRange) {}, nil},
		{"unknown type", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].Type = "Node" }, []string{
			"FieldValueInvalid spec.limits[0].type: must be a standard limit type or fully qualified",
		}},
		{"duplicate type", func(lr *corev1.LimitRange) {
			lr.Spec.Limits = append(lr.Spec.Limits, corev1.LimitRangeItem{Type: corev1.LimitTypeContainer})
		}, []string{"FieldValueDuplicate spec.limits[1].type: "}},
		{"min above max", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].Min["cpu"] = resource.MustParse("1") }, []string{
			"FieldValueInvalid spec.limits[0].min[cpu]: min value 1 is greater than max value 800m",
			"FieldValueInvalid spec.limits[0].defaultRequest[cpu]: min value 1 is greater than default request value 200m",
			"FieldValueInvalid spec.limits[0].default[cpu]: min value 1 is greater than default value 800m",
		}},
		{"default above max", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].Default["memory"] = resource.MustParse("2Gi") }, []string{
			"FieldValueInvalid spec.limits[0].default[memory]: default value 2Gi is greater than max value 1Gi",
		}},
		{"default request above default", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].DefaultRequest["memory"] = resource.MustParse("768Mi") }, []string{
			"FieldValueInvalid spec.limits[0].defaultRequest[memory]: default request value 768Mi is greater than default limit value 512Mi",
		}},
		{"default for a Pod limit", func(lr *corev1.LimitRange) {
			lr.Spec.Limits[0].Type = corev1.LimitTypePod
			lr.Spec.Limits[0].Min = nil
		}, []string{
			"FieldValueForbidden spec.limits[0].default: may not be specified when `type` is 'Pod'",
			"FieldValueForbidden spec.limits[0].defaultRequest: may not be specified when `type` is 'Pod'",
		}},
		{"claim limit without storage", func(lr *corev1.LimitRange) {
			lr.Spec.Limits = []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim, Max: rl("cpu", "1")}}
		}, []string{"FieldValueRequired spec.limits[0].limits: either minimum or maximum storage value is required, but neither was provided"}},
		{"container limit on an unknown resource", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].Max["storage"] = resource.MustParse("1Gi") }, []string{
			"FieldValueInvalid spec.limits[0].max[storage]: must be a standard resource for containers",
		}},
		{"ratio below 1", func(lr *corev1.LimitRange) {
			lr.Spec.Limits[0].MaxLimitRequestRatio = rl("memory", "500m")
		}, []string{"FieldValueInvalid spec.limits[0].maxLimitRequestRatio[memory]: ratio 500m is less than 1"}},
		{"ratio above max/min", func(lr *corev1.LimitRange) {
			lr.Spec.Limits[0].MaxLimitRequestRatio = rl("cpu", "5")
		}, []string{"FieldValueInvalid spec.limits[0].maxLimitRequestRatio[cpu]: ratio 5 is greater than max/min = 4.000000"}},
		{"hugepages default and request differ", func(lr *corev1.LimitRange) {
			lr.Spec.Limits[0].Default["hugepages-2Mi"] = resource.MustParse("4Mi")
			lr.Spec.Limits[0].DefaultRequest["hugepages-2Mi"] = resource.MustParse("2Mi")
		}, []string{"FieldValueInvalid spec.limits[0].defaultRequest[hugepages-2Mi]: default value 4Mi must equal to defaultRequest value 2Mi in hugepages-2Mi"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lr := validLimitRange()
			tc.mutate(lr)
			expectErrs(t, ValidateLimitRange(lr), tc.want)
		})
	}
}

func validQuota() *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "mem-cpu-demo", Namespace: "default", ResourceVersion: "1"},
		Spec:       corev1.ResourceQuotaSpec{Hard: rl("requests.cpu", "1", "requests.memory", "1Gi", "limits.cpu", "2", "pods", "10")},
	}
}

// The expected types, paths and messages are upstream's
// ValidateResourceQuota, ValidateResourceQuotaUpdate and
// ValidateResourceQuotaStatusUpdate (pkg/apis/core/validation/validation.go,
// kubernetes v1.37).
func TestValidateResourceQuota(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.ResourceQuota)
		want   []string
	}{
		{"valid", func(*corev1.ResourceQuota) {}, nil},
		{"unknown resource", func(q *corev1.ResourceQuota) { q.Spec.Hard["gpus"] = resource.MustParse("1") }, []string{
			"FieldValueInvalid spec.hard[gpus]: must be a standard resource type or fully qualified",
			"FieldValueInvalid spec.hard[gpus]: must be a standard resource for quota",
		}},
		{"object count quota", func(q *corev1.ResourceQuota) { q.Spec.Hard["count/deployments.apps"] = resource.MustParse("5") }, nil},
		{"negative quantity", func(q *corev1.ResourceQuota) { q.Spec.Hard["requests.cpu"] = resource.MustParse("-1") }, []string{
			"FieldValueInvalid spec.hard[requests.cpu]: must be greater than or equal to 0",
		}},
		{"fractional pods", func(q *corev1.ResourceQuota) { q.Spec.Hard["pods"] = resource.MustParse("1500m") }, []string{
			"FieldValueInvalid spec.hard[pods]: must be an integer",
		}},
		{"unknown scope", func(q *corev1.ResourceQuota) { q.Spec.Scopes = []corev1.ResourceQuotaScope{"Weekend"} }, []string{
			"FieldValueInvalid spec.scopes: unsupported scope",
		}},
		{"scope not fit for a resource", func(q *corev1.ResourceQuota) {
			q.Spec.Hard = rl("services", "5")
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}
		}, []string{"FieldValueInvalid spec.scopes: unsupported scope applied to resource"}},
		{"conflicting scopes", func(q *corev1.ResourceQuota) {
			q.Spec.Hard = rl("pods", "5")
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort}
		}, []string{"FieldValueInvalid spec.scopes: conflicting scopes"}},
		{"selector on a scope needing Exists", func(q *corev1.ResourceQuota) {
			q.Spec.Hard = rl("pods", "5")
			q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
				ScopeName: corev1.ResourceQuotaScopeTerminating, Operator: corev1.ScopeSelectorOpIn, Values: []string{"x"},
			}}}
		}, []string{"FieldValueInvalid spec.scopeSelector.matchExpressions.operator: must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"}},
		{"priority class selector without values", func(q *corev1.ResourceQuota) {
			q.Spec.Hard = rl("pods", "5")
			q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
				ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn,
			}}}
		}, []string{"FieldValueRequired spec.scopeSelector.matchExpressions.values: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"}},
		{"unknown selector operator", func(q *corev1.ResourceQuota) {
			q.Spec.Hard = rl("pods", "5")
			q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
				ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: "Like",
			}}}
		}, []string{"FieldValueInvalid spec.scopeSelector.matchExpressions.operator: not a valid selector operator"}},
		{"invalid status", func(q *corev1.ResourceQuota) { q.Status.Used = rl("secrets", "-2") }, []string{
			"FieldValueInvalid status.used[secrets]: must be greater than or equal to 0",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := validQuota()
			tc.mutate(q)
			expectErrs(t, ValidateResourceQuota(q), tc.want)
		})
	}
}

func TestValidateResourceQuotaUpdate(t *testing.T) {
	old := validQuota()
	old.Spec.Hard = rl("pods", "5")
	q := old.DeepCopy()
	q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	expectErrs(t, ValidateResourceQuotaUpdateFields(q, old), []string{`FieldValueInvalid spec.scopes: field is immutable`})

	q = old.DeepCopy()
	q.Spec.Hard = rl("pods", "10")
	expectErrs(t, ValidateResourceQuotaUpdateFields(q, old), nil)

	q = old.DeepCopy()
	q.ResourceVersion = ""
	q.Status.Hard = rl("pods", "5")
	q.Status.Used = rl("pods", "0.5")
	expectErrs(t, ValidateResourceQuotaStatusUpdateFields(q, old), []string{
		"FieldValueRequired resourceVersion: ",
		"FieldValueInvalid status.used[pods]: must be an integer",
	})
}
