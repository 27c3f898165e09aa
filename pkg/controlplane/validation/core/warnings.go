package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// deprecatedNodeLabels are the node labels upstream warns about in node
// selectors, node affinity and topology spread constraints
// (pkg/api/node's deprecation messages, v1.37).
var deprecatedNodeLabels = map[string]string{
	"beta.kubernetes.io/arch":                  `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	"beta.kubernetes.io/os":                    `deprecated since v1.14; use "kubernetes.io/os" instead`,
	"failure-domain.beta.kubernetes.io/region": `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	"failure-domain.beta.kubernetes.io/zone":   `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	"beta.kubernetes.io/instance-type":         `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
}

// deprecatedPodAnnotations are the annotations upstream warns are no
// longer functional (pkg/api/pod/warnings.go, v1.37).
var deprecatedPodAnnotations = []struct{ key, message string }{
	{"scheduler.alpha.kubernetes.io/critical-pod", `non-functional in v1.16+; use the "priorityClassName" field instead`},
	{"security.alpha.kubernetes.io/sysctls", `non-functional in v1.11+; use the "sysctls" field instead`},
	{"security.alpha.kubernetes.io/unsafe-sysctls", `non-functional in v1.11+; use the "sysctls" field instead`},
}

// appArmorContainerAnnotationPrefix is the deprecated per-container
// AppArmor annotation (v1.30 replaced it with the appArmorProfile field).
const appArmorContainerAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/"

// PodSpecWarnings are the warnings upstream's GetWarningsForPod and
// GetWarningsForPodTemplate (pkg/api/pod/warnings.go, v1.37) give for a
// pod's (or template's) metadata and spec, in upstream's order; fieldPath
// is the template's path (nil for a pod). Each check and message follows
// upstream's; the one difference is that map keys (node selector) are
// visited in sorted order, where upstream's order is Go's map order.
func PodSpecWarnings(meta *metav1.ObjectMeta, spec *corev1.PodSpec, fieldPath *field.Path) []string {
	w := &podWarnings{}
	specPath := fieldPath.Child("spec")
	annotations := fieldPath.Child("metadata", "annotations")

	// Deprecated node labels in selectors, affinity and topology keys.
	for _, k := range sortedKeys(spec.NodeSelector) {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			w.add("%s: %s", specPath.Child("nodeSelector").Key(k), msg)
		}
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		n := a.NodeAffinity
		if n.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			terms := specPath.Child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			for i, term := range n.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				w.nodeSelectorTerm(term, terms.Index(i))
			}
		}
		preferred := specPath.Child("affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
		for i, term := range n.PreferredDuringSchedulingIgnoredDuringExecution {
			w.nodeSelectorTerm(term.Preference, preferred.Index(i).Child("preference"))
		}
	}
	for i, c := range spec.TopologySpreadConstraints {
		p := specPath.Child("topologySpreadConstraints").Index(i)
		if msg, ok := deprecatedNodeLabels[c.TopologyKey]; ok {
			w.add("%s: %s is %s", p.Child("topologyKey"), c.TopologyKey, msg)
		}
		if c.LabelSelector == nil {
			w.add("%s: a null labelSelector results in matching no pod", p.Child("labelSelector"))
		}
	}

	for _, d := range deprecatedPodAnnotations {
		if _, ok := meta.Annotations[d.key]; ok {
			w.add("%s: %s", annotations.Key(d.key), d.message)
		}
	}

	w.volumes(spec, specPath)
	w.projectedTokenPaths(spec, specPath)

	if len(spec.HostAliases) > 1 {
		seen := map[string]bool{}
		for i, a := range spec.HostAliases {
			if seen[a.IP] {
				w.add("%s: duplicate ip %q", specPath.Child("hostAliases").Index(i).Child("ip"), a.IP)
			}
			seen[a.IP] = true
		}
	}
	if len(spec.ImagePullSecrets) > 1 {
		seen := map[string]bool{}
		for i, s := range spec.ImagePullSecrets {
			if seen[s.Name] {
				w.add("%s: duplicate name %q", specPath.Child("imagePullSecrets").Index(i).Child("name"), s.Name)
			}
			seen[s.Name] = true
		}
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			w.add("%s: invalid empty name %q", specPath.Child("imagePullSecrets").Index(i).Child("name"), s.Name)
		}
	}

	for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		w.fractionalBytes(spec.Overhead, name, specPath.Child("overhead"))
	}

	if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil {
		if _, ok := meta.Annotations[corev1.SeccompPodAnnotationKey]; ok {
			w.add(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotations.Key(corev1.SeccompPodAnnotationKey))
		}
	}
	podAppArmor := spec.SecurityContext != nil && spec.SecurityContext.AppArmorProfile != nil
	visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) bool {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			key := corev1.SeccompContainerAnnotationKeyPrefix + c.Name
			if _, ok := meta.Annotations[key]; ok {
				w.add(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotations.Key(key))
			}
		}
		// Templates only: for pods upstream reports it while syncing the
		// annotation with the field.
		if fieldPath != nil && !podAppArmor && (c.SecurityContext == nil || c.SecurityContext.AppArmorProfile == nil) {
			key := appArmorContainerAnnotationPrefix + c.Name
			if _, ok := meta.Annotations[key]; ok {
				w.add(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`, annotations.Key(key))
			}
		}
		w.fractionalBytes(c.Resources.Limits, corev1.ResourceMemory, p.Child("resources", "limits"))
		w.fractionalBytes(c.Resources.Requests, corev1.ResourceMemory, p.Child("resources", "requests"))
		w.fractionalBytes(c.Resources.Limits, corev1.ResourceEphemeralStorage, p.Child("resources", "limits"))
		w.fractionalBytes(c.Resources.Requests, corev1.ResourceEphemeralStorage, p.Child("resources", "requests"))
		w.duplicateEnv(c.Env, p.Child("env"))
		return true
	})
	w.ports(spec, specPath)

	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		w.add("%s: must be >= 0; negative values are invalid and will be treated as 1", specPath.Child("terminationGracePeriodSeconds"))
	}
	if a := spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			w.podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, specPath.Child("affinity", "podAffinity"))
		}
		if pa := a.PodAntiAffinity; pa != nil {
			w.podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, specPath.Child("affinity", "podAntiAffinity"))
		}
	}
	return w.out
}

type podWarnings struct{ out []string }

func (w *podWarnings) add(format string, args ...any) {
	w.out = append(w.out, fmt.Sprintf(format, args...))
}

func (w *podWarnings) nodeSelectorTerm(term corev1.NodeSelectorTerm, p *field.Path) {
	for j, e := range term.MatchExpressions {
		if msg, ok := deprecatedNodeLabels[e.Key]; ok {
			w.add("%s: %s is %s", p.Child("matchExpressions").Index(j).Child("key"), e.Key, msg)
		}
	}
}

// volumes warns about deprecated and removed volume plugins, and checks
// the claim templates of ephemeral volumes as PVC specs.
func (w *podWarnings) volumes(spec *corev1.PodSpec, specPath *field.Path) {
	for i, v := range spec.Volumes {
		p := specPath.Child("volumes").Index(i)
		for _, d := range []struct {
			set     bool
			field   string
			message string
		}{
			{v.PhotonPersistentDisk != nil, "photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"},
			// GitRepoVolumeDriver is off (and locked) in v1.37.
			{v.GitRepo != nil, "gitRepo", "deprecated in v1.11, and disabled by default in v1.33+"},
			{v.ScaleIO != nil, "scaleIO", "deprecated in v1.16, non-functional in v1.22+"},
			{v.Flocker != nil, "flocker", "deprecated in v1.22, non-functional in v1.25+"},
			{v.StorageOS != nil, "storageOS", "deprecated in v1.22, non-functional in v1.25+"},
			{v.Quobyte != nil, "quobyte", "deprecated in v1.22, non-functional in v1.25+"},
			{v.Glusterfs != nil, "glusterfs", "deprecated in v1.25, non-functional in v1.26+"},
		} {
			if d.set {
				w.add("%s: %s", p.Child(d.field), d.message)
			}
		}
		if v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil {
			w.out = append(w.out, ClaimSpecWarnings(p.Child("ephemeral", "volumeClaimTemplate", "spec"), &v.Ephemeral.VolumeClaimTemplate.Spec)...)
		}
		if v.CephFS != nil {
			w.add("%s: deprecated in v1.28, non-functional in v1.31+", p.Child("cephfs"))
		}
		if v.RBD != nil {
			w.add("%s: deprecated in v1.28, non-functional in v1.31+", p.Child("rbd"))
		}
	}
}

// projectedTokenPaths warns about projected items whose path is also a
// service account token's path. The field paths are upstream's, including
// its quirks: the item index is put on the source kind ("configMap[0]"),
// secrets are named "secrets", and a ClusterTrustBundle source has no
// index.
func (w *podWarnings) projectedTokenPaths(spec *corev1.PodSpec, specPath *field.Path) {
	tokens := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				tokens[s.ServiceAccountToken.Path] = true
			}
		}
	}
	if len(tokens) == 0 {
		return
	}
	const msg = "%s: has duplicated path with ServiceAccountToken %q"
	for i, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		sources := specPath.Child("volumes").Index(i).Child("projected", "sources")
		for _, s := range v.Projected.Sources {
			if s.ConfigMap != nil {
				for j, item := range s.ConfigMap.Items {
					if tokens[item.Path] {
						w.add(msg, sources.Child("configMap").Index(j), item.Path)
					}
				}
			}
			if s.Secret != nil {
				for j, item := range s.Secret.Items {
					if tokens[item.Path] {
						w.add(msg, sources.Child("secrets").Index(j), item.Path)
					}
				}
			}
			if s.DownwardAPI != nil {
				for j, item := range s.DownwardAPI.Items {
					if tokens[item.Path] {
						w.add(msg, sources.Child("downwardAPI").Index(j), item.Path)
					}
				}
			}
			if s.ClusterTrustBundle != nil && tokens[s.ClusterTrustBundle.Path] {
				w.add(msg, sources.Child("ClusterTrustBundle"), s.ClusterTrustBundle.Path)
			}
		}
	}
}

func (w *podWarnings) fractionalBytes(list corev1.ResourceList, name corev1.ResourceName, p *field.Path) {
	if q, ok := list[name]; ok && q.MilliValue()%1000 != 0 {
		w.add("%s: fractional byte value %q is invalid, must be an integer", p.Key(string(name)), q.String())
	}
}

// duplicateEnv warns about a variable defined again in a way that hides
// the earlier definition (apply may drop one of them): the later one is a
// valueFrom, refers only to itself, or does not refer to the earlier
// value at all.
func (w *podWarnings) duplicateEnv(env []corev1.EnvVar, p *field.Path) {
	if len(env) < 2 {
		return
	}
	seen := map[string]bool{}
	for i, e := range env {
		if !seen[e.Name] {
			seen[e.Name] = true
			continue
		}
		ref := "$(" + e.Name + ")"
		if e.ValueFrom != nil || e.Value == ref || !strings.Contains(e.Value, ref) {
			w.add("%s: hides previous definition of %q, which may be dropped when using apply", p.Index(i), e.Name)
		}
	}
}

// ports warns about a hostIP without a hostPort, and about container
// ports (across all containers) that repeat, overlap or are ambiguous
// with an earlier one of the same number and protocol.
func (w *podWarnings) ports(spec *corev1.PodSpec, specPath *field.Path) {
	type seenPort struct {
		path *field.Path
		port corev1.ContainerPort
	}
	byKey := map[string][]seenPort{}
	visitContainers(spec, specPath, func(c *corev1.Container, cp *field.Path) bool {
		for i, port := range c.Ports {
			p := cp.Child("ports").Index(i)
			if port.HostIP != "" && port.HostPort == 0 {
				w.add("%s: hostIP set without hostPort: %+v", p, port)
			}
			key := fmt.Sprintf("%d/%s", port.ContainerPort, port.Protocol)
			for _, other := range byKey[key] {
				o := other.port
				switch {
				case port.HostIP == o.HostIP && port.HostPort == o.HostPort:
					w.add("%s: duplicate port definition with %s", p, other.path)
				case port.HostPort == 0 || o.HostPort == 0:
					w.add("%s: overlapping port definition with %s", p, other.path)
				case port.HostPort == o.HostPort && (port.HostIP == "") != (o.HostIP == ""):
					w.add("%s: dangerously ambiguous port definition with %s", p, other.path)
				}
			}
			byKey[key] = append(byKey[key], seenPort{path: p, port: port})
		}
		return true
	})
}

func (w *podWarnings) podAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, p *field.Path) {
	for i, t := range required {
		if t.LabelSelector == nil {
			w.add("%s: a null labelSelector results in matching no pod", p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i).Child("labelSelector"))
		}
	}
	for i, t := range preferred {
		if t.PodAffinityTerm.LabelSelector == nil {
			w.add("%s: a null labelSelector results in matching no pod", p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("podAffinityTerm", "labelSelector"))
		}
	}
}
