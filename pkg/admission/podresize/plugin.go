// Package podresize is the PodResizeValidator admission plugin, as
// upstream's plugin/pkg/admission/podresize (default on; its feature gate
// InPlacePodVerticalScaling is GA and locked on in v1.37): an update through
// a pod's resize subresource that changes the spec (the generation moved)
// of a pod bound to a node is refused unless that Node exists, is a linux
// node (or says nothing of its OS) and has the allocatable cpu and memory
// for what the pod then requests.
package podresize

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/boundpod"
	"github.com/kapi-dev/kapi/pkg/quota"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "PodResizeValidator"

// The cause types upstream adds to its 403s.
const (
	ReasonNodeCapacity        metav1.CauseType = "NodeCapacity"
	ReasonUnsupportedPlatform metav1.CauseType = "UnsupportedPlatform"
)

// NodeGetter reads a Node (a *corev1.Node; namespace is "").
type NodeGetter = boundpod.NodeGetter

// Plugin is the PodResizeValidator admission plugin.
type Plugin struct{ nodes NodeGetter }

// New returns the plugin reading Nodes through nodes.
func New(nodes NodeGetter) *Plugin { return &Plugin{nodes: nodes} }

var (
	_ admission.Validator    = (*Plugin)(nil)
	_ admission.ObjectReader = (*Plugin)(nil)
)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles updates, as upstream.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Update }

// ReadsObjects implements admission.ObjectReader: only resizes.
func (p *Plugin) ReadsObjects(a admission.Attributes) bool { return isResize(a) }

func isResize(a admission.Attributes) bool {
	return a.Resource.Group == "" && a.Resource.Resource == "pods" && a.Subresource == "resize"
}

// Validate checks a resize against the pod's node.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	if a.Operation != admission.Update || !isResize(a) {
		return nil
	}
	pod, _, ok, err := boundpod.SpecUpdate(a)
	if !ok {
		return err
	}
	node, err := boundpod.Node(ctx, p.nodes, a, pod.Spec.NodeName)
	if err != nil {
		return err
	}
	if os, ok := node.Labels[corev1.LabelOSStable]; ok && os != "linux" {
		return withCause(admission.NewForbidden(a, fmt.Errorf("pod resize is only supported on linux nodes, node %q is %q", node.Name, os)), ReasonUnsupportedPlatform)
	}
	if err := fits(pod, node.Status.Allocatable); err != nil {
		return withCause(admission.NewForbidden(a, err), ReasonNodeCapacity)
	}
	return nil
}

// fits says which of cpu and memory the pod requests beyond allocatable
// (a resource the node does not list counts as 0), in upstream's words.
func fits(pod *corev1.Pod, allocatable corev1.ResourceList) error {
	requests := quota.PodRequests(pod)
	cpu, mem := requests[corev1.ResourceCPU], requests[corev1.ResourceMemory]
	cpuAlloc, memAlloc := allocatable[corev1.ResourceCPU], allocatable[corev1.ResourceMemory]
	var msg []string
	if cpu.Cmp(cpuAlloc) > 0 {
		msg = append(msg, fmt.Sprintf("cpu, requested: %d, allocatable: %d", cpu.MilliValue(), cpuAlloc.MilliValue()))
	}
	if mem.Cmp(memAlloc) > 0 {
		msg = append(msg, fmt.Sprintf("memory, requested: %d, allocatable: %d", mem.Value(), memAlloc.Value()))
	}
	if len(msg) > 0 {
		return fmt.Errorf("node didn't have enough allocatable resources: %s", strings.Join(msg, "; "))
	}
	return nil
}

// withCause adds a cause of type reason to a 403's details, as upstream's
// resizeValidationError.
func withCause(err error, reason metav1.CauseType) error {
	var status *apierrors.StatusError
	if s, ok := err.(*apierrors.StatusError); ok {
		status = s
	}
	if status == nil || status.ErrStatus.Details == nil {
		return err
	}
	status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{Type: reason})
	return status
}
