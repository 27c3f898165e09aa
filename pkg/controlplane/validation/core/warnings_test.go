package core

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestPodSpecWarnings checks each warning of upstream's
// GetWarningsForPod / GetWarningsForPodTemplate. Expected texts and field
// paths are those of kubernetes/kubernetes pkg/api/pod/warnings.go and
// its warnings_test.go (v1.37).
func TestPodSpecWarnings(t *testing.T) {
	c := func(name string) corev1.Container { return corev1.Container{Name: name, Image: "i"} }
	template := field.NewPath("spec", "template")
	cases := []struct {
		name     string
		meta     metav1.ObjectMeta
		spec     corev1.PodSpec
		template bool
		want     []string
	}{{
		name: "clean pod",
		spec: corev1.PodSpec{Containers: []corev1.Container{c("a")}},
	}, {
		name: "deprecated node labels everywhere",
		spec: corev1.PodSpec{
			NodeSelector: map[string]string{"beta.kubernetes.io/arch": "amd64"},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "beta.kubernetes.io/os", Operator: "Exists"}},
				}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "failure-domain.beta.kubernetes.io/zone", Operator: "Exists"}},
				}}},
			}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{TopologyKey: "failure-domain.beta.kubernetes.io/region", MaxSkew: 1}},
		},
		want: []string{
			`spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`,
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead`,
			`spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
			`spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/region is deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
			`spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod`,
		},
	}, {
		name: "deprecated annotations and volumes",
		meta: metav1.ObjectMeta{Annotations: map[string]string{"scheduler.alpha.kubernetes.io/critical-pod": "", "security.alpha.kubernetes.io/sysctls": "a=b"}},
		spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "g", VolumeSource: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "r"}}},
			{Name: "c", VolumeSource: corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{Monitors: []string{"m"}}}},
			{Name: "gl", VolumeSource: corev1.VolumeSource{Glusterfs: &corev1.GlusterfsVolumeSource{EndpointsName: "e", Path: "p"}}},
		}},
		want: []string{
			`metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead`,
			`metadata.annotations[security.alpha.kubernetes.io/sysctls]: non-functional in v1.11+; use the "sysctls" field instead`,
			// kube-apiserver v1.37.2 (GitRepoVolumeDriver off and locked).
			`spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+`,
			`spec.volumes[1].cephfs: deprecated in v1.28, non-functional in v1.31+`,
			`spec.volumes[2].glusterfs: deprecated in v1.25, non-functional in v1.26+`,
		},
	}, {
		name: "projected paths that clash with the token",
		spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{Items: []corev1.KeyToPath{{Key: "k", Path: "token"}}}},
			{Secret: &corev1.SecretProjection{Items: []corev1.KeyToPath{{Key: "k", Path: "other"}, {Key: "k", Path: "token"}}}},
		}}}}}},
		want: []string{
			`spec.volumes[0].projected.sources.configMap[0]: has duplicated path with ServiceAccountToken "token"`,
			`spec.volumes[0].projected.sources.secrets[1]: has duplicated path with ServiceAccountToken "token"`,
		},
	}, {
		name: "host aliases and pull secrets",
		spec: corev1.PodSpec{
			HostAliases:      []corev1.HostAlias{{IP: "1.2.3.4"}, {IP: "1.2.3.4"}},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "a"}, {Name: "a"}, {Name: ""}},
		},
		want: []string{
			`spec.hostAliases[1].ip: duplicate ip "1.2.3.4"`,
			`spec.imagePullSecrets[1].name: duplicate name "a"`,
			`spec.imagePullSecrets[2].name: invalid empty name ""`,
		},
	}, {
		name: "seccomp annotations without the field",
		meta: metav1.ObjectMeta{Annotations: map[string]string{
			corev1.SeccompPodAnnotationKey:                      "runtime/default",
			corev1.SeccompContainerAnnotationKeyPrefix + "a":    "runtime/default",
			corev1.SeccompContainerAnnotationKeyPrefix + "b":    "runtime/default",
			corev1.SeccompContainerAnnotationKeyPrefix + "gone": "runtime/default",
		}},
		spec: corev1.PodSpec{Containers: []corev1.Container{c("a"), {Name: "b", Image: "i", SecurityContext: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: "RuntimeDefault"}}}}},
		want: []string{
			`metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead`,
			`metadata.annotations[container.seccomp.security.alpha.kubernetes.io/a]: non-functional in v1.27+; use the "seccompProfile" field instead`,
		},
	}, {
		name:     "apparmor annotation in a template",
		template: true,
		meta:     metav1.ObjectMeta{Annotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/a": "runtime/default"}},
		spec:     corev1.PodSpec{Containers: []corev1.Container{c("a")}},
		want: []string{
			`spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/a]: deprecated since v1.30; use the "appArmorProfile" field instead`,
		},
	}, {
		name: "fractional bytes",
		spec: corev1.PodSpec{
			Overhead: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100m")},
			Containers: []corev1.Container{{Name: "a", Image: "i", Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1.5")},
				Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("500m")},
			}}},
		},
		want: []string{
			`spec.overhead[memory]: fractional byte value "100m" is invalid, must be an integer`,
			`spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value "500m" is invalid, must be an integer`,
		},
	}, {
		name: "env that hides an earlier definition",
		spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i", Image: "i", Env: []corev1.EnvVar{
			{Name: "A", Value: "1"}, {Name: "A", Value: "2"},
			{Name: "B", Value: "1"}, {Name: "B", Value: "$(B)-suffix"},
			{Name: "C", Value: "1"}, {Name: "C", Value: "$(C)"},
		}}}},
		want: []string{
			`spec.initContainers[0].env[1]: hides previous definition of "A", which may be dropped when using apply`,
			`spec.initContainers[0].env[5]: hides previous definition of "C", which may be dropped when using apply`,
		},
	}, {
		name: "ports",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}, {ContainerPort: 81, Protocol: "TCP", HostIP: "10.0.0.1"}}},
			{Name: "b", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}, {ContainerPort: 80, Protocol: "TCP", HostPort: 8080}}},
		}},
		want: []string{
			`spec.containers[0].ports[1]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:81 Protocol:TCP HostIP:10.0.0.1}`,
			`spec.containers[1].ports[0]: duplicate port definition with spec.containers[0].ports[0]`,
			`spec.containers[1].ports[1]: overlapping port definition with spec.containers[0].ports[0]`,
			`spec.containers[1].ports[1]: overlapping port definition with spec.containers[1].ports[0]`,
		},
	}, {
		name: "grace period and null pod affinity selectors",
		spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptrTo(int64(-1)),
			Affinity: &corev1.Affinity{
				PodAffinity:     &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "k"}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "k"}}}},
			},
		},
		want: []string{
			`spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1`,
			`spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod`,
			`spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod`,
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var path *field.Path
			want := tc.want
			if tc.template {
				path = template
			}
			got := PodSpecWarnings(&tc.meta, &tc.spec, path)
			if !slices.Equal(got, want) {
				t.Errorf("got\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
