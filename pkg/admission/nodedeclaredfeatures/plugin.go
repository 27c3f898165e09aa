// Package nodedeclaredfeatures is the NodeDeclaredFeatureValidator
// admission plugin, as upstream's plugin/pkg/admission/nodedeclaredfeatures
// (default on; its feature gate NodeDeclaredFeatures is GA and locked on in
// v1.37): an update of a pod bound to a node (the main resource or its
// resize subresource) that changes the spec (the generation moved) and
// needs node features is refused unless the Node declares them in
// status.declaredFeatures.
//
// The features a pod update can need are those of upstream's framework
// (k8s.io/component-helpers nodedeclaredfeatures, v0.37.2) whose inference
// for updates can say yes: a change of the pod-level resources
// (InPlacePodLevelResourcesVerticalScaling), of a non-sidecar init
// container's resources (InPlacePodVerticalScalingInitContainers), of the
// size limit of a memory-backed emptyDir
// (InPlacePodVerticalScalingMemoryBackedVolumes). The framework's other
// features infer nothing for updates, and none has a maximum version. The
// ResourceSlice check of the plugin applies only with the alpha gate
// DRANodeAllocatableResources, off by default, and is not implemented.
package nodedeclaredfeatures

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/boundpod"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "NodeDeclaredFeatureValidator"

// The features a pod update may require, by upstream's names.
const (
	PodLevelResourcesResize   = "InPlacePodLevelResourcesVerticalScaling"
	InitContainersResize      = "InPlacePodVerticalScalingInitContainers"
	MemoryBackedVolumesResize = "InPlacePodVerticalScalingMemoryBackedVolumes"
)

// NodeGetter reads a Node (a *corev1.Node; namespace is "").
type NodeGetter = boundpod.NodeGetter

// Plugin is the NodeDeclaredFeatureValidator admission plugin.
type Plugin struct{ nodes NodeGetter }

// New returns the plugin reading Nodes through nodes.
func New(nodes NodeGetter) *Plugin { return &Plugin{nodes: nodes} }

var (
	_ admission.Validator    = (*Plugin)(nil)
	_ admission.ObjectReader = (*Plugin)(nil)
)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates and updates, as upstream (creates of ResourceSlices only
// matter with an alpha gate).
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// ReadsObjects implements admission.ObjectReader: only pod updates.
func (p *Plugin) ReadsObjects(a admission.Attributes) bool { return isPodUpdate(a) }

func isPodUpdate(a admission.Attributes) bool {
	return a.Operation == admission.Update && a.Resource.Group == "" && a.Resource.Resource == "pods" &&
		(a.Subresource == "" || a.Subresource == "resize")
}

// Validate checks a pod update against its node's declared features.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	if !isPodUpdate(a) {
		return nil
	}
	pod, old, ok, err := boundpod.SpecUpdate(a)
	if !ok {
		return err
	}
	required := Required(old, pod)
	if len(required) == 0 {
		return nil
	}
	node, err := boundpod.Node(ctx, p.nodes, a, pod.Spec.NodeName)
	if err != nil {
		return err
	}
	var missing []string
	for _, f := range required {
		if !slices.Contains(node.Status.DeclaredFeatures, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return admission.NewForbidden(a, fmt.Errorf("pod update requires features %s which are not available on node %q",
			strings.Join(missing, ", "), node.Name))
	}
	return nil
}

// Required returns the features the update of old to pod needs, sorted by
// name (upstream's framework orders its registry so).
//
// Upstream compares init containers' resources with reflect.DeepEqual;
// kapi compares them semantically (the same quantity written two ways is
// no change), which differs only when a client rewrites an unchanged
// quantity in another form.
func Required(old, pod *corev1.Pod) []string {
	var req []string
	if (old.Spec.Resources != nil || pod.Spec.Resources != nil) && !equality.Semantic.DeepEqual(old.Spec.Resources, pod.Spec.Resources) {
		req = append(req, PodLevelResourcesResize)
	}
	for i := range old.Spec.InitContainers {
		c := &old.Spec.InitContainers[i]
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if !sidecar && i < len(pod.Spec.InitContainers) && !equality.Semantic.DeepEqual(c.Resources, pod.Spec.InitContainers[i].Resources) {
			req = append(req, InitContainersResize)
			break
		}
	}
	if memoryVolumeResized(old, pod) {
		req = append(req, MemoryBackedVolumesResize)
	}
	slices.Sort(req)
	return req
}

// memoryVolumeResized: a memory-backed emptyDir's size limit changed
// (volumes compared by position, as upstream).
func memoryVolumeResized(old, pod *corev1.Pod) bool {
	if len(old.Spec.Volumes) != len(pod.Spec.Volumes) {
		return false
	}
	for i := range pod.Spec.Volumes {
		n, o := &pod.Spec.Volumes[i], &old.Spec.Volumes[i]
		if n.Name != o.Name || n.EmptyDir == nil || n.EmptyDir.Medium != corev1.StorageMediumMemory {
			continue
		}
		if o.EmptyDir == nil || n.EmptyDir.SizeLimit == nil || o.EmptyDir.SizeLimit == nil {
			continue
		}
		if n.EmptyDir.SizeLimit.Cmp(*o.EmptyDir.SizeLimit) != 0 {
			return true
		}
	}
	return false
}
