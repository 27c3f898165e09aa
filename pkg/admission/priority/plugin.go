// Package priority is the Priority admission plugin, as upstream's
// plugin/pkg/admission/priority: a new pod's priorityClassName resolves to
// its PriorityClass's value and preemption policy (the global default class,
// else 0 and PreemptLowerPriority, when it names none); a pod naming a
// class that does not exist, or giving a priority or preemption policy
// that differs from its class's, is refused; and only one PriorityClass
// may be the global default.
//
// It reads PriorityClasses through a small interface (Lister) so that it
// works over whatever serves them (scheduling.k8s.io is not served on main
// yet: the plugin is reported unavailable until a Lister is given).
package priority

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "Priority"

// Lister reads PriorityClasses.
type Lister interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
	List(ctx context.Context, namespace string) (runtime.Object, error)
}

// Plugin is the Priority admission plugin.
type Plugin struct{ classes Lister }

// New returns the plugin reading PriorityClasses through classes.
func New(classes Lister) *Plugin { return &Plugin{classes: classes} }

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates and updates.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit resolves the priority of new pods.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes) error {
	if a.Operation != admission.Create || a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	var value int32
	var policy *corev1.PreemptionPolicy
	if pod.Spec.PriorityClassName == "" {
		def, err := p.globalDefault(ctx)
		if err != nil {
			return fmt.Errorf("failed to get default priority class: %w", err)
		}
		if def != nil {
			pod.Spec.PriorityClassName, value, policy = def.Name, def.Value, def.PreemptionPolicy
		} else {
			lower := corev1.PreemptLowerPriority
			policy = &lower
		}
	} else {
		obj, err := p.classes.Get(ctx, "", pod.Spec.PriorityClassName)
		if apierrors.IsNotFound(err) {
			return admission.NewForbidden(a, fmt.Errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		if err != nil {
			return fmt.Errorf("failed to get PriorityClass with name %s: %w", pod.Spec.PriorityClassName, err)
		}
		pc, ok := obj.(*schedulingv1.PriorityClass)
		if !ok {
			return fmt.Errorf("priority: read a %T", obj)
		}
		value, policy = pc.Value, pc.PreemptionPolicy
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
		return admission.NewForbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, value))
	}
	pod.Spec.Priority = &value
	if pod.Spec.PreemptionPolicy != nil && policy != nil && *pod.Spec.PreemptionPolicy != *policy {
		return admission.NewForbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
	}
	pod.Spec.PreemptionPolicy = policy
	return nil
}

// Validate refuses a second global default PriorityClass.
// ReadsObjects implements admission.ObjectReader: only priority classes
// are checked.
func (p *Plugin) ReadsObjects(a admission.Attributes) bool {
	return a.Resource.Group == schedulingv1.GroupName && a.Resource.Resource == "priorityclasses" && a.Subresource == ""
}

func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	if a.Resource.Group != schedulingv1.GroupName || a.Resource.Resource != "priorityclasses" || a.Subresource != "" {
		return nil
	}
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok || !pc.GlobalDefault {
		return nil
	}
	def, err := p.globalDefault(ctx)
	if err != nil {
		return fmt.Errorf("failed to get default priority class: %w", err)
	}
	if def != nil && def.Name != pc.Name {
		return admission.NewForbidden(a, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil
}

// globalDefault is the global default class; of several (a race), the one
// with the lowest value, as upstream.
func (p *Plugin) globalDefault(ctx context.Context) (*schedulingv1.PriorityClass, error) {
	obj, err := p.classes.List(ctx, "")
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*schedulingv1.PriorityClassList)
	if !ok {
		return nil, fmt.Errorf("priority: listed a %T", obj)
	}
	var def *schedulingv1.PriorityClass
	for i := range list.Items {
		pc := &list.Items[i]
		if pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
			def = pc
		}
	}
	return def, nil
}
