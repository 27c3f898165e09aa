package corev1

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func ctr(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Image: "x", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

// Expected classes follow upstream's ComputePodQOS
// (pkg/apis/core/helper/qos/qos.go, v1.37) and its qos_test.go cases.
func TestPodQOSClass(t *testing.T) {
	cases := []struct {
		name string
		spec corev1.PodSpec
		want corev1.PodQOSClass
	}{
		{"nothing", corev1.PodSpec{Containers: []corev1.Container{ctr("a", nil, nil)}}, corev1.PodQOSBestEffort},
		{"zero requests", corev1.PodSpec{Containers: []corev1.Container{ctr("a", rl("cpu", "0"), nil)}}, corev1.PodQOSBestEffort},
		{"only other resources", corev1.PodSpec{Containers: []corev1.Container{ctr("a", rl("nvidia.com/gpu", "1"), rl("nvidia.com/gpu", "1"))}}, corev1.PodQOSBestEffort},
		{"guaranteed", corev1.PodSpec{Containers: []corev1.Container{
			ctr("a", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi")),
			ctr("b", rl("cpu", "100m", "memory", "10Mi"), rl("cpu", "100m", "memory", "10Mi")),
		}}, corev1.PodQOSGuaranteed},
		{"limits without memory", corev1.PodSpec{Containers: []corev1.Container{ctr("a", rl("cpu", "1"), rl("cpu", "1"))}}, corev1.PodQOSBurstable},
		{"requests below limits", corev1.PodSpec{Containers: []corev1.Container{ctr("a", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "2", "memory", "1Gi"))}}, corev1.PodQOSBurstable},
		{"one container best effort", corev1.PodSpec{Containers: []corev1.Container{
			ctr("a", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi")),
			ctr("b", nil, nil),
		}}, corev1.PodQOSBurstable},
		{"init container counts", corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("i", rl("cpu", "1"), nil)},
			Containers:     []corev1.Container{ctr("a", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))},
		}, corev1.PodQOSBurstable},
		{"pod-level guaranteed", corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi"), Limits: rl("cpu", "1", "memory", "1Gi")},
			Containers: []corev1.Container{ctr("a", nil, nil)},
		}, corev1.PodQOSGuaranteed},
		{"pod-level burstable", corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Limits: rl("cpu", "1")},
			Containers: []corev1.Container{ctr("a", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))},
		}, corev1.PodQOSBurstable},
		{"pod-level unsupported only: containers decide", corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Limits: rl("nvidia.com/gpu", "1")},
			Containers: []corev1.Container{ctr("a", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))},
		}, corev1.PodQOSGuaranteed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := PodQOSClass(&corev1.Pod{Spec: c.spec}); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// Expectations follow upstream's podStrategy.PrepareForCreate
// (pkg/registry/core/pod/strategy.go, v1.37) and its strategy_test.go.
func TestPrepareForCreate(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:       "p",
			Generation: 7,
			Labels:     map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{
				corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "a": "localhost/prof",
				corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "b": "bogus",
				corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "c": "runtime/default",
				corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "d": "unconfined",
			},
		},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}},
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "example.com/gate"}},
			Containers: []corev1.Container{
				ctr("a", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi")),
				ctr("b", nil, nil),
				ctr("c", nil, nil),
				{Name: "d", Image: "x", SecurityContext: &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}},
			},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}},
					TopologyKey:       "kubernetes.io/hostname",
					MatchLabelKeys:    []string{"app", "missing"},
					MismatchLabelKeys: []string{"tier"},
				}, {
					// No selector: nothing is merged.
					TopologyKey:    "zone",
					MatchLabelKeys: []string{"app"},
				}},
			}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector:  &metav1.LabelSelector{},
				MatchLabelKeys: []string{"app"},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", Conditions: []corev1.PodCondition{{Type: corev1.PodReady}}},
	}
	warnings := PrepareForCreate(pod)

	if pod.Generation != 1 {
		t.Errorf("got generation %d, want 1", pod.Generation)
	}
	if pod.Status.Phase != corev1.PodPending || pod.Status.QOSClass != corev1.PodQOSBurstable || pod.Status.PodIP != "" {
		t.Errorf("got status phase %q qos %q podIP %q, want Pending, Burstable and the rest cleared", pod.Status.Phase, pod.Status.QOSClass, pod.Status.PodIP)
	}
	if len(pod.Status.Conditions) != 1 {
		t.Fatalf("got conditions %+v, want only PodScheduled", pod.Status.Conditions)
	}
	c := pod.Status.Conditions[0]
	if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != "SchedulingGated" ||
		c.Message != "Scheduling is blocked due to non-empty scheduling gates" || c.LastTransitionTime.IsZero() {
		t.Errorf("got condition %+v, want PodScheduled=False SchedulingGated", c)
	}

	term := pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	wantExprs := []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}},
		{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"front"}},
	}
	if diff := cmp.Diff(wantExprs, term.LabelSelector.MatchExpressions); diff != "" {
		t.Errorf("anti-affinity selector (-want +got):\n%s", diff)
	}
	if sel := pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[1].LabelSelector; sel != nil {
		t.Errorf("got selector %+v on a term without one, want none", sel)
	}
	wantTSC := []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}
	if diff := cmp.Diff(wantTSC, pod.Spec.TopologySpreadConstraints[0].LabelSelector.MatchExpressions); diff != "" {
		t.Errorf("topology spread selector (-want +got):\n%s", diff)
	}

	// AppArmor: a's annotation becomes its field; b's is invalid (warned,
	// not copied); c's equals the pod's profile (not copied, not warned);
	// d has its own field (left alone).
	if got := pod.Spec.Containers[0].SecurityContext; got == nil || got.AppArmorProfile == nil ||
		got.AppArmorProfile.Type != corev1.AppArmorProfileTypeLocalhost || ptr.Deref(got.AppArmorProfile.LocalhostProfile, "") != "prof" {
		t.Errorf("container a: got security context %+v, want the localhost profile prof", got)
	}
	if got := pod.Spec.Containers[1].SecurityContext; got != nil {
		t.Errorf("container b: got security context %+v, want none", got)
	}
	if got := pod.Spec.Containers[2].SecurityContext; got != nil {
		t.Errorf("container c: got security context %+v, want none", got)
	}
	if got := pod.Spec.Containers[3].SecurityContext.AppArmorProfile.Type; got != corev1.AppArmorProfileTypeRuntimeDefault {
		t.Errorf("container d: got profile %s, want its own RuntimeDefault", got)
	}
	wantWarnings := []string{
		`metadata.annotations[container.apparmor.security.beta.kubernetes.io/a]: deprecated since v1.30; use the "appArmorProfile" field instead`,
		`metadata.annotations[container.apparmor.security.beta.kubernetes.io/b]: deprecated since v1.30; use the "appArmorProfile" field instead`,
	}
	if !slices.Equal(warnings, wantWarnings) {
		t.Errorf("got warnings %q, want %q", warnings, wantWarnings)
	}

	// A QoS class given on create is kept (upstream reads it through
	// GetPodQOS before resetting the status).
	given := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr("a", nil, nil)}}, Status: corev1.PodStatus{QOSClass: corev1.PodQOSGuaranteed}}
	PrepareForCreate(given)
	if given.Status.QOSClass != corev1.PodQOSGuaranteed {
		t.Errorf("got QoS %s, want the given Guaranteed", given.Status.QOSClass)
	}
	// Windows pods keep their annotations only.
	win := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "a": "unconfined"}},
		Spec:       corev1.PodSpec{OS: &corev1.PodOS{Name: corev1.Windows}, Containers: []corev1.Container{ctr("a", nil, nil)}},
	}
	if w := PrepareForCreate(win); len(w) != 0 || win.Spec.Containers[0].SecurityContext != nil {
		t.Errorf("windows pod: got warnings %q and security context %+v, want neither", w, win.Spec.Containers[0].SecurityContext)
	}
}

// Pod-level resources, as v1.37's DefaultPodLevelResources
// (pkg/api/pod/util.go, run by the pod strategy's PrepareForCreate)
// completes them after the decoding defaults.
func TestPodLevelResourceDefaults(t *testing.T) {
	cases := []struct {
		name       string
		pod        corev1.PodSpec
		wantReqs   corev1.ResourceList
		wantLimits corev1.ResourceList
	}{{
		name: "no pod-level resources: nothing",
		pod:  corev1.PodSpec{Containers: []corev1.Container{ctr("a", rl("cpu", "1"), nil)}},
	}, {
		name: "limits only, no container requests: requests = limits",
		pod: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Limits: rl("cpu", "2", "memory", "1Gi")},
			Containers: []corev1.Container{ctr("a", nil, nil)},
		},
		wantReqs:   rl("cpu", "2", "memory", "1Gi"),
		wantLimits: rl("cpu", "2", "memory", "1Gi"),
	}, {
		name: "init container peak above the containers",
		pod: corev1.PodSpec{
			Resources:      &corev1.ResourceRequirements{Limits: rl("cpu", "4")},
			InitContainers: []corev1.Container{ctr("i", rl("cpu", "3"), nil)},
			Containers:     []corev1.Container{ctr("a", rl("cpu", "1"), nil), ctr("b", rl("cpu", "1"), nil)},
		},
		wantReqs:   rl("cpu", "3"),
		wantLimits: rl("cpu", "4"),
	}, {
		name: "container hugepages limits become pod limits",
		pod: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Limits: rl("memory", "1Gi")},
			Containers: []corev1.Container{ctr("a", nil, rl("hugepages-2Mi", "4Mi")), ctr("b", nil, rl("hugepages-2Mi", "2Mi"))},
		},
		// hugepages requests are not from the containers' (not
		// overcommittable) but from the defaulted pod limit.
		wantReqs:   rl("memory", "1Gi", "hugepages-2Mi", "6Mi"),
		wantLimits: rl("memory", "1Gi", "hugepages-2Mi", "6Mi"),
	}, {
		name: "requests only: limits from containers that all set one",
		pod: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi")},
			Containers: []corev1.Container{ctr("a", nil, rl("cpu", "1", "memory", "1Gi")), ctr("b", nil, rl("cpu", "2"))},
		},
		wantReqs:   rl("cpu", "1", "memory", "1Gi"),
		wantLimits: rl("cpu", "3"),
	}, {
		// kube-apiserver v1.37.2 answered this pod with limits cpu 3.
		name: "request above the containers' limits: the limit is the request",
		pod: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: rl("cpu", "3")},
			Containers: []corev1.Container{ctr("a", nil, rl("cpu", "2"))},
		},
		wantReqs:   rl("cpu", "3"),
		wantLimits: rl("cpu", "3"),
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: c.pod}
			SetDefaults_Pod(pod)
			DefaultPodLevelResources(pod)
			var gotReqs, gotLimits corev1.ResourceList
			if r := pod.Spec.Resources; r != nil {
				gotReqs, gotLimits = r.Requests, r.Limits
			}
			if !sameResources(gotReqs, c.wantReqs) || !sameResources(gotLimits, c.wantLimits) {
				t.Errorf("got requests %v limits %v, want %v and %v", gotReqs, gotLimits, c.wantReqs, c.wantLimits)
			}
		})
	}
}

func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
