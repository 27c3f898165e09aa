// Package runtimeclass is the RuntimeClass admission plugin, as
// upstream's plugin/pkg/admission/runtimeclass (v1.37): a new pod naming
// a RuntimeClass gets the class's overhead (spec.overhead) and
// scheduling (node selector merged, tolerations merged), and is refused
// when the class does not exist, when its node selector conflicts with
// the class's, or when its overhead differs from the class's (or is set
// without one).
package runtimeclass

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "RuntimeClass"

// Getter reads RuntimeClasses (cluster-scoped: namespace "").
type Getter interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
}

// Plugin is the RuntimeClass admission plugin.
type Plugin struct{ classes Getter }

// New returns the plugin reading RuntimeClasses through classes.
func New(classes Getter) *Plugin { return &Plugin{classes: classes} }

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates, as upstream.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

func ignored(a *admission.Attributes) bool {
	return a.Subresource != "" || a.Resource.Group != "" || a.Resource.Resource != "pods"
}

// Admit sets the pod's overhead and scheduling from its RuntimeClass.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes) error {
	if ignored(&a) {
		return nil
	}
	pod, rc, err := p.prepare(ctx, a)
	if err != nil {
		return err
	}
	if err := setOverhead(a, pod, rc); err != nil {
		return err
	}
	return setScheduling(a, pod, rc)
}

// Validate checks the pod's overhead against its RuntimeClass.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	if ignored(&a) {
		return nil
	}
	pod, rc, err := p.prepare(ctx, a)
	if err != nil {
		return err
	}
	if rc != nil && rc.Overhead != nil {
		if !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return admission.NewForbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
	} else if pod.Spec.Overhead != nil {
		return admission.NewForbidden(a, fmt.Errorf("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	return nil
}

// prepare returns the pod and its RuntimeClass (nil when it names none).
func (p *Plugin) prepare(ctx context.Context, a admission.Attributes) (*corev1.Pod, *nodev1.RuntimeClass, error) {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.RuntimeClassName == nil {
		return pod, nil, nil
	}
	obj, err := p.classes.Get(ctx, "", *pod.Spec.RuntimeClassName)
	if apierrors.IsNotFound(err) {
		return pod, nil, admission.NewForbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", *pod.Spec.RuntimeClassName))
	}
	if err != nil {
		return pod, nil, apierrors.NewInternalError(err)
	}
	rc, ok := obj.(*nodev1.RuntimeClass)
	if !ok {
		return pod, nil, apierrors.NewInternalError(fmt.Errorf("runtimeclass: read a %T", obj))
	}
	return pod, rc, nil
}

func setOverhead(a admission.Attributes, pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc == nil || rc.Overhead == nil {
		return nil
	}
	if pod.Spec.Overhead != nil && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
		return admission.NewForbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
	}
	pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	return nil
}

func setScheduling(a admission.Attributes, pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc == nil || rc.Scheduling == nil {
		return nil
	}
	selector := pod.Spec.NodeSelector
	if selector == nil {
		if rc.Scheduling.NodeSelector != nil {
			selector = make(map[string]string, len(rc.Scheduling.NodeSelector))
			for k, v := range rc.Scheduling.NodeSelector {
				selector[k] = v
			}
		}
	} else {
		for k, v := range rc.Scheduling.NodeSelector {
			if pv, ok := selector[k]; ok && pv != v {
				return admission.NewForbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv))
			}
			selector[k] = v
		}
	}
	pod.Spec.NodeSelector = selector
	pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, rc.Scheduling.Tolerations)
	return nil
}

// mergeTolerations merges two lists, keeping only the superset of
// tolerations where one covers another and the first of equal ones
// (upstream's pkg/util/tolerations MergeTolerations).
func mergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := append(append([]corev1.Toleration(nil), first...), second...)
	var merged []corev1.Toleration
next:
	for i, t := range all {
		for _, m := range merged {
			if isSuperset(m, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !apiequality.Semantic.DeepEqual(&t, &later) && isSuperset(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// isSuperset reports whether ss tolerates everything t does.
func isSuperset(ss, t corev1.Toleration) bool {
	if apiequality.Semantic.DeepEqual(&t, &ss) {
		return true
	}
	// An empty key with Exists matches every key.
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	// An empty effect matches every effect.
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil {
		if t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds {
			return false
		}
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
