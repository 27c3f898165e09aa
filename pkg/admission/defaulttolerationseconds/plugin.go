// Package defaulttolerationseconds is the DefaultTolerationSeconds
// admission plugin: a pod that does not tolerate the not-ready and
// unreachable NoExecute taints gets tolerations of them for 300 seconds
// (--default-not-ready-toleration-seconds,
// --default-unreachable-toleration-seconds), as upstream's
// plugin/pkg/admission/defaulttolerationseconds.
package defaulttolerationseconds

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "DefaultTolerationSeconds"

// DefaultSeconds is the default of both flags (upstream: 300).
const DefaultSeconds int64 = 300

// Plugin is the DefaultTolerationSeconds admission plugin.
type Plugin struct {
	NotReadySeconds, UnreachableSeconds int64
}

// New returns the plugin with the given toleration seconds.
func New(notReady, unreachable int64) *Plugin {
	return &Plugin{NotReadySeconds: notReady, UnreachableSeconds: unreachable}
}

var _ admission.Mutator = (*Plugin)(nil)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates and updates.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit adds the missing tolerations to pods.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected *api.Pod but got %T", a.Object))
	}
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		// An empty key tolerates every taint; an empty effect every effect.
		noExecute := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		if noExecute && (t.Key == corev1.TaintNodeNotReady || t.Key == "") {
			notReady = true
		}
		if noExecute && (t.Key == corev1.TaintNodeUnreachable || t.Key == "") {
			unreachable = true
		}
	}
	if !notReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeNotReady, p.NotReadySeconds))
	}
	if !unreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeUnreachable, p.UnreachableSeconds))
	}
	return nil
}

func toleration(key string, seconds int64) corev1.Toleration {
	return corev1.Toleration{
		Key:               key,
		Operator:          corev1.TolerationOpExists,
		Effect:            corev1.TaintEffectNoExecute,
		TolerationSeconds: &seconds,
	}
}
