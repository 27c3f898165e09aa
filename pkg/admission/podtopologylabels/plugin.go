// Package podtopologylabels is the PodTopologyLabels admission plugin, as
// upstream's plugin/pkg/admission/podtopologylabels (its feature gate
// PodTopologyLabelsAdmission is beta and on by default since v1.35): a pod
// bound to a Node — through the pods/binding subresource, or created with
// spec.nodeName — gets the Node's topology.k8s.io/zone and
// topology.k8s.io/region labels, without overwriting labels it has. For a
// Binding the labels go on the Binding, which the binding subresource
// copies onto the pod. A Node that does not exist adds nothing.
package podtopologylabels

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "PodTopologyLabels"

// Labels are the Node labels copied (upstream's defaultConfig).
var Labels = []string{"topology.k8s.io/zone", "topology.k8s.io/region"}

// NodeGetter reads a Node (a *corev1.Node; namespace is "").
type NodeGetter interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
}

// Plugin is the PodTopologyLabels admission plugin.
type Plugin struct{ nodes NodeGetter }

// New returns the plugin reading Nodes through nodes.
func New(nodes NodeGetter) *Plugin { return &Plugin{nodes: nodes} }

var _ admission.Mutator = (*Plugin)(nil)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates, as upstream.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit copies the topology labels.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" {
		return nil
	}
	switch a.Subresource {
	case "":
		pod, ok := a.Object.(*corev1.Pod)
		if !ok {
			return fmt.Errorf("expected Pod but got %T", a.Object)
		}
		if pod.Spec.NodeName == "" {
			return nil
		}
		return p.copyLabels(ctx, pod.Spec.NodeName, &pod.ObjectMeta)
	case "binding":
		b, ok := a.Object.(*corev1.Binding)
		if !ok {
			return fmt.Errorf("expected Binding but got %s", a.Kind.Kind)
		}
		// Only the kind: the scheduler sets nothing else of the target.
		if b.Target.Kind != "Node" {
			return nil
		}
		return p.copyLabels(ctx, b.Target.Name, &b.ObjectMeta)
	}
	return nil
}

// copyLabels adds the topology labels of node to m's labels, keeping
// those m has.
func (p *Plugin) copyLabels(ctx context.Context, node string, m metav1.Object) error {
	obj, err := p.nodes.Get(ctx, "", node)
	if apierrors.IsNotFound(err) {
		return nil // as upstream: never break binding to an unknown node
	}
	if err != nil {
		return err
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return fmt.Errorf("expected Node but got %T", obj)
	}
	labels := m.GetLabels()
	for _, k := range Labels {
		v, ok := n.Labels[k]
		if !ok {
			continue
		}
		if _, exists := labels[k]; exists {
			continue
		}
		if labels == nil {
			labels = map[string]string{}
		}
		labels[k] = v
	}
	m.SetLabels(labels)
	return nil
}
