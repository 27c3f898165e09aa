// Package namespacelifecycle is the NamespaceLifecycle admission plugin:
// nothing is created in a namespace that does not exist (404) or is being
// terminated (403), and the system namespaces cannot be deleted.
package namespacelifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// NamespaceGetter reads a namespace by name.
type NamespaceGetter interface {
	Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error)
}

// Plugin is the NamespaceLifecycle admission plugin.
type Plugin struct {
	Namespaces NamespaceGetter
	// Immortal namespaces cannot be deleted (default, kube-system,
	// kube-public as upstream).
	Immortal map[string]bool
}

// New returns the plugin with kube's immortal namespaces.
func New(namespaces NamespaceGetter) *Plugin {
	return &Plugin{Namespaces: namespaces, Immortal: map[string]bool{
		metav1.NamespaceDefault: true, metav1.NamespaceSystem: true, metav1.NamespacePublic: true,
	}}
}

var _ admission.Validator = (*Plugin)(nil)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "NamespaceLifecycle"

// Name implements admission.Validator.
func (p *Plugin) Name() string { return PluginName }

// accessReviews may be created in any namespace, existing or not, as
// upstream exempts them: they store nothing and answer a question.
var accessReviews = map[schema.GroupResource]bool{
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
}

// Handles creates and deletes.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Delete
}

// Validate applies the namespace lifecycle rules.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	isNamespace := a.Resource.Group == "" && a.Resource.Resource == "namespaces" && a.Subresource == ""
	if a.Operation == admission.Delete {
		if isNamespace && p.Immortal[a.Name] {
			return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("this namespace may not be deleted"))
		}
		return nil
	}
	if isNamespace || a.Namespace == "" || accessReviews[a.Resource.GroupResource()] {
		return nil
	}
	obj, err := p.Namespaces.Get(ctx, a.Namespace, &metav1.GetOptions{})
	if err != nil {
		return err // namespaces "x" not found
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	forbidden := apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	forbidden.ErrStatus.Details.Causes = append(forbidden.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
		Field:   "metadata.namespace",
	})
	return forbidden
}
