// Package taintnodesbycondition is the TaintNodesByCondition admission
// plugin: a new node gets the node.kubernetes.io/not-ready:NoSchedule
// taint, so nothing is scheduled on it before its kubelet reports it
// ready, as upstream's plugin/pkg/admission/nodetaint.
package taintnodesbycondition

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "TaintNodesByCondition"

// Plugin is the TaintNodesByCondition admission plugin.
type Plugin struct{}

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

var _ admission.Mutator = (*Plugin)(nil)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates only.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit taints new nodes.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "nodes" || a.Subresource != "" {
		return nil
	}
	node, ok := a.Object.(*corev1.Node)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule {
			return nil
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	return nil
}
