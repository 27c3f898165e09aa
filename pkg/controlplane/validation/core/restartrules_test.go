package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func restartRule(action corev1.ContainerRestartRuleAction, op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) corev1.ContainerRestartRule {
	return corev1.ContainerRestartRule{Action: action, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
}

// Container restartPolicy and restartPolicyRules (ContainerRestartRules
// and RestartAllContainersOnContainerExits, both on by default at v1.37).
// The expected errors are the reference's answer: kube-apiserver v1.37.2
// (pkg/apis/core/validation/validation.go validateContainerRestartPolicy,
// validateInitContainerRestartPolicy), the Status causes of the same pods
// POSTed to it on 2026-11-27, in its order.
func TestValidatePodContainerRestartRules(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   []string
	}{
		{"rules and policies on every container kind", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			p.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{restartRule("Restart", "In", 1, 2)}
			p.Spec.InitContainers = []corev1.Container{
				{Name: "i1", Image: "busybox", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyOnFailure),
					RestartPolicyRules: []corev1.ContainerRestartRule{restartRule("Restart", "In", 42)}},
				{Name: "i2", Image: "busybox", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
					RestartPolicyRules: []corev1.ContainerRestartRule{restartRule("RestartAllContainers", "NotIn", 0)}},
			}
		}, nil},
		{"invalid policies and rules", func(p *corev1.Pod) {
			p.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{restartRule("Restart", "In", 1, 2)}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d", Image: "busybox", RestartPolicy: ptr.To(corev1.ContainerRestartPolicy("Weird"))})
			p.Spec.InitContainers = []corev1.Container{
				{Name: "i1", Image: "busybox", RestartPolicyRules: []corev1.ContainerRestartRule{restartRule("Restart", "In", 42)}},
				{Name: "i2", Image: "busybox", RestartPolicy: ptr.To(corev1.ContainerRestartPolicy("Sometimes")),
					ResizePolicy:       []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}},
					RestartPolicyRules: []corev1.ContainerRestartRule{{Action: "Bogus"}, restartRule("Restart", "Has")}},
			}
		}, []string{
			"FieldValueRequired spec.containers[0].restartPolicy: must specify restartPolicy when restart rules are used",
			`FieldValueNotSupported spec.containers[1].restartPolicy: supported values: "Always", "Never", "OnFailure"`,
			"FieldValueRequired spec.initContainers[0].restartPolicy: must specify restartPolicy when restart rules are used",
			`FieldValueNotSupported spec.initContainers[1].restartPolicy: supported values: "Always", "Never", "OnFailure"`,
			`FieldValueNotSupported spec.initContainers[1].restartPolicyRules[0].action: supported values: "Restart", "RestartAllContainers"`,
			"FieldValueRequired spec.initContainers[1].restartPolicyRules[0].exitCodes: must be specified",
			`FieldValueNotSupported spec.initContainers[1].restartPolicyRules[1].exitCodes.operator: supported values: "In", "NotIn"`,
			"FieldValueInvalid spec.initContainers[1].resizePolicy[0].restartPolicy: must not be set to 'RestartContainer' for non-sidecar initContainers",
		}},
		{"too many rules and exit codes", func(p *corev1.Pod) {
			codes := make([]int32, 256)
			rules := make([]corev1.ContainerRestartRule, 21)
			for i := range rules {
				rules[i] = restartRule("Restart", "In", 1)
			}
			rules[3] = restartRule("Restart", "In", codes...)
			p.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
			p.Spec.Containers[0].RestartPolicyRules = rules
		}, []string{
			"FieldValueTooMany spec.containers[0].restartPolicyRules: must have at most 20 items",
			"FieldValueTooMany spec.containers[0].restartPolicyRules[3].exitCodes.values: must have at most 255 items",
		}},
		{"resize policy under a Never pod", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
		}, []string{"FieldValueInvalid spec.containers[0].resizePolicy: must be 'NotRequired' when pod `restartPolicy` is 'Never'"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := validPod()
			tc.mutate(pod)
			for i := range pod.Spec.InitContainers {
				pod.Spec.InitContainers[i].TerminationMessagePolicy = corev1.TerminationMessageReadFile
				pod.Spec.InitContainers[i].ImagePullPolicy = corev1.PullAlways
			}
			for i := range pod.Spec.Containers {
				pod.Spec.Containers[i].TerminationMessagePolicy = corev1.TerminationMessageReadFile
				pod.Spec.Containers[i].ImagePullPolicy = corev1.PullAlways
			}
			checkErrors(t, ValidatePod(pod, DefaultPodValidationOptions()), tc.want)
		})
	}
}

// An update keeps a RestartContainer resize policy a non-sidecar init
// container already had (upstream's
// AllowExistingRestartContainerForNonSidecarInitContainer).
func TestRestartContainerOnInitContainerKeptOnUpdate(t *testing.T) {
	old := validPod()
	old.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullAlways,
		ResizePolicy: []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}}}
	opts := ValidationOptionsForPodSpec(&old.Spec, &old.Spec, &old.ObjectMeta, &old.ObjectMeta)
	if !opts.AllowExistingRestartContainerForNonSidecarInitContainer {
		t.Fatal("options of an update do not allow the RestartContainer policy the old spec had")
	}
	checkErrors(t, ValidatePodSpec(&old.Spec, &old.ObjectMeta, specPath, opts), nil)
	checkErrors(t, ValidatePodSpec(&old.Spec, &old.ObjectMeta, specPath, DefaultPodValidationOptions()), []string{
		"FieldValueInvalid spec.initContainers[0].resizePolicy[0].restartPolicy: must not be set to 'RestartContainer' for non-sidecar initContainers",
	})
}

// A terminated container may become running again only if it is
// restarted: its matching rule, else its own policy, else the pod's; any
// RestartAllContainers rule lets every container restart. The reference
// (kube-apiserver v1.37.2, pods/status patched on 2026-11-27) accepted c
// (Never, rule In [42], exit 42) going back to running and rejected d
// (no policy, pod Never).
func TestValidatePodStatusUpdateContainerRestartRules(t *testing.T) {
	terminated := func(name string, code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	running := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	}
	base := func() *corev1.Pod {
		p := validPod()
		p.ResourceVersion = "1"
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		c := p.Spec.Containers[0]
		c.Name = "c"
		c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
		c.RestartPolicyRules = []corev1.ContainerRestartRule{restartRule("Restart", "In", 42)}
		d := *c.DeepCopy()
		d.Name, d.RestartPolicy, d.RestartPolicyRules, d.Ports = "d", nil, nil, nil
		p.Spec.Containers = []corev1.Container{c, d}
		return p
	}
	cases := []struct {
		name        string
		mutate      func(*corev1.Pod)
		exitC, exit int32
		want        []string
	}{
		{"rule matches", nil, 42, 42, []string{"FieldValueForbidden status.containerStatuses[1].state: may not be transitioned to non-terminated state"}},
		{"no rule matches, container Never", nil, 1, 42, []string{
			"FieldValueForbidden status.containerStatuses[0].state: may not be transitioned to non-terminated state",
			"FieldValueForbidden status.containerStatuses[1].state: may not be transitioned to non-terminated state",
		}},
		{"container OnFailure over pod Never", func(p *corev1.Pod) {
			p.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
		}, 1, 0, []string{"FieldValueForbidden status.containerStatuses[1].state: may not be transitioned to non-terminated state"}},
		{"pod OnFailure, d failed", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }, 1, 3, []string{
			"FieldValueForbidden status.containerStatuses[0].state: may not be transitioned to non-terminated state",
		}},
		{"a RestartAllContainers rule restarts all", func(p *corev1.Pod) {
			p.Spec.Containers[0].RestartPolicyRules[0].Action = corev1.ContainerRestartRuleActionRestartAllContainers
		}, 1, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := base()
			if tc.mutate != nil {
				tc.mutate(old)
			}
			old.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("c", tc.exitC), terminated("d", tc.exit)}
			pod := old.DeepCopy()
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{running("c"), running("d")}
			checkErrors(t, ValidatePodStatusUpdate(pod, old, DefaultPodValidationOptions()), tc.want)
		})
	}
}
