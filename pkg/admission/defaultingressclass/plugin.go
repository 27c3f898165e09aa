// Package defaultingressclass is the DefaultIngressClass admission plugin,
// as upstream's plugin/pkg/admission/network/defaultingressclass (v1.37):
// a new Ingress that names no class (neither spec.ingressClassName nor
// the kubernetes.io/ingress.class annotation) gets the default
// IngressClass (annotated ingressclass.kubernetes.io/is-default-class=
// "true"; of several, the newest, then by name).
package defaultingressclass

import (
	"context"
	"fmt"
	"sort"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "DefaultIngressClass"

// The annotations (k8s.io/api networking/v1 and v1beta1).
const (
	IsDefaultAnnotation    = networkingv1.AnnotationIsDefaultIngressClass
	IngressClassAnnotation = "kubernetes.io/ingress.class"
)

// Lister lists IngressClasses (a *networkingv1.IngressClassList).
type Lister interface {
	List(ctx context.Context, namespace string) (runtime.Object, error)
}

// Plugin is the DefaultIngressClass admission plugin.
type Plugin struct{ classes Lister }

// New returns the plugin listing IngressClasses through classes.
func New(classes Lister) *Plugin { return &Plugin{classes: classes} }

var _ admission.Mutator = (*Plugin)(nil)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates, as upstream.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit sets the default class on ingresses without one.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes) error {
	if a.Resource.Group != networkingv1.GroupName || a.Resource.Resource != "ingresses" || a.Subresource != "" {
		return nil
	}
	ing, ok := a.Object.(*networkingv1.Ingress)
	if !ok {
		return nil
	}
	if ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, ok := ing.Annotations[IngressClassAnnotation]; ok {
		return nil
	}
	def, err := p.defaultClass(ctx)
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if def != nil {
		name := def.Name
		ing.Spec.IngressClassName = &name
	}
	return nil
}

// defaultClass is the newest default class (then by name), or nil.
func (p *Plugin) defaultClass(ctx context.Context) (*networkingv1.IngressClass, error) {
	obj, err := p.classes.List(ctx, "")
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*networkingv1.IngressClassList)
	if !ok {
		return nil, fmt.Errorf("defaultingressclass: listed a %T", obj)
	}
	var defaults []*networkingv1.IngressClass
	for i := range list.Items {
		if list.Items[i].Annotations[IsDefaultAnnotation] == "true" {
			defaults = append(defaults, &list.Items[i])
		}
	}
	if len(defaults) == 0 {
		return nil, nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	return defaults[0], nil
}
