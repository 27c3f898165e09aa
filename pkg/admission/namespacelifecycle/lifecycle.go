// Package namespacelifecycle is the NamespaceLifecycle admission plugin:
// nothing is created in a namespace that does not exist (404) or is being
// terminated (403), and the system namespaces cannot be deleted.
package namespacelifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

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
//
// As upstream's, it reads a namespace from the server's cache (a Get at
// resourceVersion "0", which the watch cache answers without a storage
// round trip) and asks storage itself only when the cache does not have
// it, or when the namespace was deleted through this server in the last
// forceLiveLookupTTL while the cache still shows it active. Upstream waits
// 50 ms for its informer before that live lookup; kapi goes to storage at
// once (the answer is the same, sooner).
type Plugin struct {
	Namespaces NamespaceGetter
	// Immortal namespaces cannot be deleted (default, kube-system,
	// kube-public as upstream).
	Immortal map[string]bool
	// Now is the clock of the live-lookup entries; nil is time.Now.
	Now func() time.Time

	mu sync.Mutex
	// liveLookup holds the namespaces deleted through the server, until
	// when their reads must skip the cache.
	liveLookup map[string]time.Time
}

// forceLiveLookupTTL is how long after a namespace's deletion was admitted
// its reads skip the cache (upstream's forceLiveLookupTTL).
const forceLiveLookupTTL = 30 * time.Second

// cached asks the getter for any recent state: the watch cache's.
var cached = &metav1.GetOptions{ResourceVersion: "0"}

func (p *Plugin) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// deleted records that namespace name is being deleted through the server.
func (p *Plugin) deleted(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.liveLookup == nil {
		p.liveLookup = map[string]time.Time{}
	}
	for n, until := range p.liveLookup {
		if !now.Before(until) {
			delete(p.liveLookup, n)
		}
	}
	p.liveLookup[name] = now.Add(forceLiveLookupTTL)
}

// mustLookLive says whether name was deleted through the server lately.
func (p *Plugin) mustLookLive(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.liveLookup[name]
	return ok && p.now().Before(until)
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
		if isNamespace {
			p.deleted(a.Name)
		}
		return nil
	}
	if isNamespace || a.Namespace == "" || accessReviews[a.Resource.GroupResource()] {
		return nil
	}
	obj, err := p.Namespaces.Get(ctx, a.Namespace, cached)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	ns, _ := obj.(*corev1.Namespace)
	if ns == nil || (ns.Status.Phase != corev1.NamespaceTerminating && p.mustLookLive(a.Namespace)) {
		if obj, err = p.Namespaces.Get(ctx, a.Namespace, &metav1.GetOptions{}); err != nil {
			return err // namespaces "x" not found
		}
		ns, _ = obj.(*corev1.Namespace)
	}
	if ns == nil || ns.Status.Phase != corev1.NamespaceTerminating {
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
