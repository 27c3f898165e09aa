package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
)

func storedPod() *corev1.Pod {
	p := validPod()
	p.ResourceVersion = "1"
	p.UID = "uid-1"
	return p
}

// Expected errors: upstream's ValidatePodUpdate, ValidatePodStatusUpdate,
// ValidatePodEphemeralContainersUpdate and ValidatePodResize (v1.37).
func TestValidatePodUpdate(t *testing.T) {
	forbiddenSpec := "FieldValueForbidden spec: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
	cases := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   []string
	}{
		{"labels and image may change", func(p *corev1.Pod) {
			p.Labels = map[string]string{"a": "b"}
			p.Spec.Containers[0].Image = "nginx:1.26"
		}, nil},
		{"active deadline may be set, then lowered", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) }, nil},
		{"toleration added", func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists})
		}, nil},
		{"restart policy changed", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }, []string{forbiddenSpec}},
		{"container added", func(p *corev1.Pod) {
			c := *p.Spec.Containers[0].DeepCopy()
			c.Name, c.Ports = "two", nil
			p.Spec.Containers = append(p.Spec.Containers, c)
		}, []string{"FieldValueForbidden spec.containers: pod updates may not add or remove containers"}},
		{"image removed", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, []string{
			"FieldValueRequired spec.containers[0].image: ",
			"FieldValueRequired spec.containers[0].image: ",
		}},
		{"node name set", func(p *corev1.Pod) { p.Spec.NodeName = "node-1" }, []string{forbiddenSpec}},
		{"mirror pod annotation added", func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}, []string{
			"FieldValueInvalid metadata.annotations[kubernetes.io/config.mirror]: must set spec.nodeName if mirror pod annotation is set",
			"FieldValueForbidden metadata.annotations[kubernetes.io/config.mirror]: may not add mirror pod annotation",
		}},
		{"uid changed", func(p *corev1.Pod) { p.UID = "uid-2" }, []string{"FieldValueInvalid metadata.uid: field is immutable"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := storedPod()
			pod := old.DeepCopy()
			c.mutate(pod)
			errs := ValidatePodUpdate(pod, old, ValidationOptionsForPodSpec(&pod.Spec, &old.Spec, &pod.ObjectMeta, &old.ObjectMeta))
			got := errStrings(errs)
			// The spec diff after the message is informative only.
			for i := range got {
				got[i], _, _ = strings.Cut(got[i], "\n")
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}

	// The active deadline may only go down, and not away.
	old := storedPod()
	old.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
	up := old.DeepCopy()
	up.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	checkErrors(t, ValidatePodUpdate(up, old, DefaultPodValidationOptions()), []string{
		"FieldValueInvalid spec.activeDeadlineSeconds: must be less than or equal to previous value",
	})
	up.Spec.ActiveDeadlineSeconds = nil
	checkErrors(t, ValidatePodUpdate(up, old, DefaultPodValidationOptions()), []string{
		"FieldValueInvalid spec.activeDeadlineSeconds: must not update from a positive integer to nil value",
	})

	// A gated pod may gain node selector terms and lose gates, not gain
	// them.
	gated := storedPod()
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/a"}}
	gated.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	ok := gated.DeepCopy()
	ok.Spec.NodeSelector["zone"] = "a"
	ok.Spec.SchedulingGates = nil
	checkErrors(t, ValidatePodUpdate(ok, gated, DefaultPodValidationOptions()), nil)
	bad := gated.DeepCopy()
	bad.Spec.NodeSelector = map[string]string{"disk": "hdd"}
	bad.Spec.SchedulingGates = append(bad.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: "example.com/b"})
	checkErrors(t, ValidatePodUpdate(bad, gated, DefaultPodValidationOptions()), []string{
		"FieldValueForbidden spec.schedulingGates[1].name: only deletion is allowed, but found new scheduling gate 'example.com/b'",
		"FieldValueInvalid spec.nodeSelector: only additions to spec.nodeSelector are allowed (no mutations or deletions)",
	})
}

func TestValidatePodStatusUpdate(t *testing.T) {
	old := storedPod()
	old.Spec.RestartPolicy = corev1.RestartPolicyNever
	old.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}

	pod := old.DeepCopy()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP = "10.0.0.1"
	pod.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}}
	checkErrors(t, ValidatePodStatusUpdate(pod, old, DefaultPodValidationOptions()), nil)

	pod.Status.QOSClass = corev1.PodQOSGuaranteed
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}, {IP: "not-an-ip"}}
	pod.Status.Conditions = []corev1.PodCondition{{Type: "bad type", Status: corev1.ConditionTrue}}
	pod.Spec.NodeName = "elsewhere"
	checkErrors(t, ValidatePodStatusUpdate(pod, old, DefaultPodValidationOptions()), []string{
		"FieldValueInvalid metadata.conditions[0].Type: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		"FieldValueForbidden status.nodeName: may not be changed directly",
		"FieldValueInvalid status.qosClass: field is immutable",
		"FieldValueForbidden status.containerStatuses[0].state: may not be transitioned to non-terminated state",
		"FieldValueInvalid status.podIPs[2]: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
		"FieldValueInvalid status.podIPs: may specify no more than one IP for each IP family",
	})
}

func TestValidateEphemeralContainersAndResize(t *testing.T) {
	old := storedPod()
	debug := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}, TargetContainerName: "app"}

	added := old.DeepCopy()
	added.Spec.EphemeralContainers = []corev1.EphemeralContainer{debug}
	checkErrors(t, ValidatePodEphemeralContainersUpdate(added, old, DefaultPodValidationOptions()), nil)

	bad := added.DeepCopy()
	bad.Spec.EphemeralContainers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
	bad.Spec.EphemeralContainers[0].TargetContainerName = "nope"
	bad.Spec.EphemeralContainers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/d", SubPath: "x"}}
	checkErrors(t, ValidatePodEphemeralContainersUpdate(bad, old, DefaultPodValidationOptions()), []string{
		"FieldValueNotFound spec.ephemeralContainers[0].targetContainerName: ",
		"FieldValueForbidden spec.ephemeralContainers[0].ports: cannot be set for an Ephemeral Container",
		"FieldValueForbidden spec.ephemeralContainers[0].volumeMounts[0].subPath: cannot be set for an Ephemeral Container",
	})

	removed := old.DeepCopy()
	withDebug := added
	got := errStrings(ValidatePodEphemeralContainersUpdate(removed, withDebug, DefaultPodValidationOptions()))
	if len(got) != 1 || !strings.HasPrefix(got[0], `FieldValueForbidden spec.ephemeralContainers: existing ephemeral containers "debug" may not be removed`) {
		t.Errorf("removing an ephemeral container: got %q", got)
	}

	// Resize: cpu may change within the QoS class; other resources and
	// fields may not.
	resized := old.DeepCopy()
	resized.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1")
	resized.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
	checkErrors(t, ValidatePodResize(resized, old, DefaultPodValidationOptions()), nil)
	tooMuch := resized.DeepCopy()
	tooMuch.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
	delete(tooMuch.Spec.Containers[0].Resources.Requests, corev1.ResourceCPU)
	checkErrors(t, ValidatePodResize(tooMuch, old, DefaultPodValidationOptions()), []string{
		"FieldValueForbidden spec.containers[0].resources.requests: resource requests cannot be removed",
		"FieldValueForbidden spec: only cpu and memory resources are mutable",
	})
	mem := old.DeepCopy()
	mem.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("1Gi")
	// v1.37.2 refuses only removing requests or limits (its
	// validateContainerResize), not adding or decreasing memory limits.
	checkErrors(t, ValidatePodResize(mem, old, DefaultPodValidationOptions()), nil)

	// Init containers (InPlacePodVerticalScalingInitContainers, GA in
	// v1.37): cpu and memory may change, nothing else; a non-sidecar one
	// with a RestartContainer resize policy may not be resized.
	withInit := old.DeepCopy()
	withInit.Spec.InitContainers = []corev1.Container{*old.Spec.Containers[0].DeepCopy()}
	withInit.Spec.InitContainers[0].Name = "init"
	initCPU := withInit.DeepCopy()
	initCPU.Spec.InitContainers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
	checkErrors(t, ValidatePodResize(initCPU, withInit, DefaultPodValidationOptions()), nil)
	initDisk := withInit.DeepCopy()
	initDisk.Spec.InitContainers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
	checkErrors(t, ValidatePodResize(initDisk, withInit, DefaultPodValidationOptions()), []string{
		"FieldValueForbidden spec.initContainers[0]: only cpu and memory resources for init or sidecar containers are mutable",
	})
	initPolicy := initCPU.DeepCopy()
	initPolicy.Spec.InitContainers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}}
	checkErrors(t, ValidatePodResize(initPolicy, withInit, DefaultPodValidationOptions()), []string{
		"FieldValueInvalid spec.initContainers[0].resizePolicy[0].restartPolicy: must not be set to 'RestartContainer' for non-sidecar initContainers",
		"FieldValueForbidden spec.initContainers[0]: only cpu and memory resources for init or sidecar containers are mutable",
		"FieldValueForbidden spec.initContainers[0]: non-sidecar init containers with a resize policy of RestartContainer cannot be resized",
	})

	// validatePodResizeContainerOrdering.
	two := old.DeepCopy()
	two.Spec.Containers = append(two.Spec.Containers, *old.Spec.Containers[0].DeepCopy())
	two.Spec.Containers[1].Name = "second"
	swapped := two.DeepCopy()
	swapped.Spec.Containers[0], swapped.Spec.Containers[1] = swapped.Spec.Containers[1], swapped.Spec.Containers[0]
	checkErrors(t, ValidatePodResize(swapped, two, DefaultPodValidationOptions()), []string{
		"FieldValueForbidden spec.containers[0].name: containers may not be renamed or reordered on resize",
		"FieldValueForbidden spec.containers[1].name: containers may not be renamed or reordered on resize",
	})
	checkErrors(t, ValidatePodResize(two, old, DefaultPodValidationOptions()), []string{
		"FieldValueForbidden spec.containers: containers may not be added or removed on resize",
	})

	// Pod-level resources (InPlacePodLevelResourcesVerticalScaling, beta
	// and on in v1.37): cpu and memory may change, none be removed.
	podLevel := old.DeepCopy()
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("4Gi"),
	}}
	plCPU := podLevel.DeepCopy()
	plCPU.Spec.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
	checkErrors(t, ValidatePodResize(plCPU, podLevel, DefaultPodValidationOptions()), nil)
	plRemoved := podLevel.DeepCopy()
	delete(plRemoved.Spec.Resources.Requests, corev1.ResourceMemory)
	checkErrors(t, ValidatePodResize(plRemoved, podLevel, DefaultPodValidationOptions()), []string{
		"FieldValueForbidden spec.resources.requests: pod-level resource requests cannot be removed",
	})
}

// Workloads validate their templates with ValidatePodTemplateSpec and
// their restart policy rule (upstream's apps and batch validation).
func TestValidatePodTemplateSpec(t *testing.T) {
	tmpl := func() *corev1.PodTemplateSpec {
		pt := &corev1.PodTemplate{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "web", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 80}},
			}}},
		}}
		defaultscorev1.SetObjectDefaults_PodTemplate(pt)
		return &pt.Template
	}
	p := field.NewPath("spec", "template")
	checkErrors(t, ValidatePodTemplateSpec(tmpl(), p, DefaultPodValidationOptions()), nil)

	deployment := DefaultPodValidationOptions()
	deployment.RestartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyAlways}
	never := tmpl()
	never.Spec.RestartPolicy = corev1.RestartPolicyNever
	checkErrors(t, ValidatePodTemplateSpec(never, p, deployment), []string{
		`FieldValueNotSupported spec.template.spec.restartPolicy: supported values: "Always"`,
	})
	job := DefaultPodValidationOptions()
	job.RestartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
	checkErrors(t, ValidatePodTemplateSpec(tmpl(), p, job), []string{
		`FieldValueNotSupported spec.template.spec.restartPolicy: supported values: "OnFailure", "Never"`,
	})

	// Templates tolerate unset host ports with host networking and a
	// placeholder image, not ephemeral containers or bad labels.
	hn := tmpl()
	hn.Spec.HostNetwork = true
	hn.Spec.Containers[0].Image = " "
	checkErrors(t, ValidatePodTemplateSpec(hn, p, DefaultPodValidationOptions()), nil)
	bad := tmpl()
	bad.Labels = map[string]string{"app": "web app"}
	bad.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile}}}
	checkErrors(t, ValidatePodTemplateSpec(bad, p, DefaultPodValidationOptions()), []string{
		"FieldValueInvalid spec.template.labels: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
		"FieldValueForbidden spec.template.spec.ephemeralContainers: ephemeral containers not allowed in pod template",
	})

	// PodTemplate objects: metadata and template.
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "Web", Namespace: "default", Finalizers: []string{"custom"}}, Template: *tmpl()}
	checkErrors(t, ValidatePodTemplate(pt, DefaultPodValidationOptions()), []string{
		"FieldValueInvalid metadata.name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
		"FieldValueInvalid metadata.finalizers[0]: name is neither a standard finalizer name nor is it fully qualified",
	})
	checkErrors(t, ValidatePodTemplateFields(pt, DefaultPodValidationOptions()), []string{
		"FieldValueInvalid metadata.finalizers[0]: name is neither a standard finalizer name nor is it fully qualified",
	})
}
