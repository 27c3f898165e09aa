package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/controlplane/defaults/corev1"
)

// validPod is a pod as it reaches validation: decoded (defaulted) and
// prepared for create.
func validPod() *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "nginx:1.25",
				Ports: []corev1.ContainerPort{{ContainerPort: 80}},
				Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data"}},
		},
	}
	defaultscorev1.SetObjectDefaults_Pod(pod)
	defaultscorev1.PrepareForCreate(pod)
	return pod
}

// errStrings renders errors as "<type> <field>: <detail>" (what the
// API's Status causes carry: reason, field, message).
func errStrings(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = string(e.Type) + " " + e.Field + ": " + e.Detail
	}
	return out
}

func checkErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	got := errStrings(errs)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// The expected types, paths and messages are upstream's
// (pkg/apis/core/validation/validation.go, kubernetes v1.37, and the
// apimachinery validation messages it uses): the errors users hit most.
func TestValidatePodCreate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   []string
	}{
		{"valid", func(*corev1.Pod) {}, nil},
		{"no containers", func(p *corev1.Pod) {
			p.Spec.Containers = nil
			p.Spec.Volumes = nil
		}, []string{"FieldValueRequired spec.containers: "}},
		{"invalid container name", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "App_1" }, []string{
			"FieldValueInvalid spec.containers[0].name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
		}},
		{"duplicate container names", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, *p.Spec.Containers[0].DeepCopy())
			p.Spec.Containers[1].Ports = nil
		}, []string{"FieldValueDuplicate spec.containers[1].name: "}},
		{"no image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, []string{"FieldValueRequired spec.containers[0].image: "}},
		{"image with whitespace", func(p *corev1.Pod) { p.Spec.Containers[0].Image = " nginx" }, []string{
			"FieldValueInvalid spec.containers[0].image: must not have leading or trailing whitespace",
		}},
		{"port out of range", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 70000 }, []string{
			"FieldValueInvalid spec.containers[0].ports[0].containerPort: must be between 1 and 65535, inclusive",
		}},
		{"unknown protocol", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "HTTP" }, []string{
			`FieldValueNotSupported spec.containers[0].ports[0].protocol: supported values: "SCTP", "TCP", "UDP"`,
		}},
		{"env name with '='", func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A=B", Value: "x"}} }, []string{
			"FieldValueInvalid spec.containers[0].env[0].name: a valid environment variable name must consist only of printable ASCII characters other than '='",
		}},
		{"env with value and valueFrom", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "x", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}
		}, []string{"FieldValueInvalid spec.containers[0].env[0].valueFrom: may not be specified when `value` is not empty"}},
		{"env from unknown field", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}}}}
		}, []string{`FieldValueNotSupported spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`}},
		{"requests above limits", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
		}, []string{"FieldValueInvalid spec.containers[0].resources.requests: must be less than or equal to cpu limit of 500m"}},
		{"negative quantity", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("-1Gi")
		}, []string{"FieldValueInvalid spec.containers[0].resources.limits[memory]: must be greater than or equal to 0"}},
		{"unknown resource", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits["gpu"] = resource.MustParse("1")
		}, []string{
			"FieldValueInvalid spec.containers[0].resources.limits[gpu]: must be a standard resource type or fully qualified",
			"FieldValueInvalid spec.containers[0].resources.limits[gpu]: must be a standard resource for containers",
		}},
		{"mount of a missing volume", func(p *corev1.Pod) { p.Spec.Containers[0].VolumeMounts[0].Name = "nope" }, []string{
			"FieldValueNotFound spec.containers[0].volumeMounts[0].name: ",
		}},
		{"two mounts on one path", func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/data"})
		}, []string{"FieldValueInvalid spec.containers[0].volumeMounts[1].mountPath: must be unique"}},
		{"volume with two sources", func(p *corev1.Pod) {
			p.Spec.Volumes[0].ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: ptr.To[int32](0o644)}
		}, []string{
			"FieldValueForbidden spec.volumes[0].configMap: may not specify more than 1 volume type",
			// A volume with errors cannot be mounted (upstream's ValidateVolumes
			// leaves it out of the volumes mounts are checked against).
			"FieldValueNotFound spec.containers[0].volumeMounts[0].name: ",
		}},
		{"invalid volume name", func(p *corev1.Pod) {
			p.Spec.Volumes[0].Name = "Data"
			p.Spec.Containers[0].VolumeMounts = nil
		}, []string{
			"FieldValueInvalid spec.volumes[0].name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
		}},
		{"secret volume without name", func(p *corev1.Pod) {
			p.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: ptr.To[int32](0o1000)}}
		}, []string{
			"FieldValueRequired spec.volumes[0].secret.secretName: ",
			"FieldValueInvalid spec.volumes[0].secret.defaultMode: must be a number between 0 and 0777 (octal), both inclusive",
			"FieldValueNotFound spec.containers[0].volumeMounts[0].name: ",
		}},
		{"restart policy", func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, []string{
			`FieldValueNotSupported spec.restartPolicy: supported values: "Always", "OnFailure", "Never"`,
		}},
		{"dns policy None without config", func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSNone }, []string{
			"FieldValueRequired spec.dnsConfig: must provide `dnsConfig` when `dnsPolicy` is None",
		}},
		{"invalid hostname and subdomain", func(p *corev1.Pod) {
			p.Spec.Hostname = "web.example"
			p.Spec.Subdomain = "Sub"
		}, []string{
			"FieldValueInvalid spec.hostname: must not contain dots",
			"FieldValueInvalid spec.subdomain: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
		}},
		{"toleration", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v", Effect: "NoRun"}}
		}, []string{
			"FieldValueInvalid spec.tolerations[0].operator: value must be empty when `operator` is 'Exists'",
			`FieldValueNotSupported spec.tolerations[0].effect: supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
		}},
		{"liveness probe", func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{SuccessThreshold: 2, PeriodSeconds: -1, TimeoutSeconds: 1, FailureThreshold: 3}
		}, []string{
			"FieldValueRequired spec.containers[0].livenessProbe: must specify a handler type",
			"FieldValueInvalid spec.containers[0].livenessProbe.periodSeconds: must be greater than or equal to 0",
			"FieldValueInvalid spec.containers[0].livenessProbe.successThreshold: must be 1",
		}},
		{"http probe port", func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstrString("http_port"), Scheme: "HTTP"}},
				TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
		}, []string{
			"FieldValueInvalid spec.containers[0].readinessProbe.httpGet.port: must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
		}},
		{"init container probe", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, SuccessThreshold: 1}}}
		}, []string{"FieldValueForbidden spec.initContainers[0].livenessProbe: may not be set for init containers without restartPolicy=Always"}},
		{"node selector", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "fast ssd"} }, []string{
			"FieldValueInvalid spec.nodeSelector: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
		}},
		{"host port with host networking", func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 8080
		}, []string{"FieldValueInvalid spec.containers[0].ports[0].hostPort: must match `containerPort` when `hostNetwork` is true"}},
		{"ephemeral containers on create", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile}}}
		}, []string{"FieldValueForbidden spec.ephemeralContainers: cannot be set on create"}},
		{"service account token without service account", func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To[int32](0o644),
				Sources:     []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}}},
			}}})
		}, []string{"FieldValueForbidden spec.volumes[1].projected.sources[0].serviceAccountToken: must not be specified when serviceAccountName is not set"}},
		{"privileged allowed, bidirectional propagation not unprivileged", func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts[0].MountPropagation = ptr.To(corev1.MountPropagationBidirectional)
		}, []string{"FieldValueForbidden spec.containers[0].volumeMounts.mountPropagation: Bidirectional mount propagation is available only to privileged containers"}},
		{"sidecar resize policy and grace period", func(p *corev1.Pod) {
			p.Spec.TerminationGracePeriodSeconds = nil
		}, []string{"FieldValueRequired spec.terminationGracePeriodSeconds: "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := validPod()
			c.mutate(pod)
			checkErrors(t, ValidatePod(pod, ValidationOptionsForPodSpec(&pod.Spec, nil, &pod.ObjectMeta, nil)), c.want)
		})
	}
}

func intstrString(s string) intstr.IntOrString { return intstr.FromString(s) }
