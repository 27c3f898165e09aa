package controlplane

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission/policy/params"
	policyvalidating "github.com/kapi-dev/kapi/pkg/admission/policy/validating"
	"github.com/kapi-dev/kapi/pkg/admission/webhook"
	"github.com/kapi-dev/kapi/pkg/admission/webhook/mutating"
	"github.com/kapi-dev/kapi/pkg/admission/webhook/validating"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/validatingadmissionpolicy"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
)

// webhookPlugins makes the MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook plugins over the webhook configurations'
// stores, and the post-start hook that keeps their configurations up to
// date (list and watch) until the server stops.
func webhookPlugins(s *server.GenericServer, c Config, b *storageBuilder, ns clusterScoped, svcs serviceStores) (*mutating.Plugin, *validating.Plugin, error) {
	mwc, err := storageAs[*generic.Store](b, mutatingWebhooksResource)
	if err != nil {
		return nil, nil, err
	}
	vwc, err := storageAs[*generic.Store](b, validatingWebhooksResource)
	if err != nil {
		return nil, nil, err
	}
	opts := webhook.Options{
		NamespaceLabels: func(ctx context.Context, name string) (map[string]string, error) {
			obj, err := ns.Get(ctx, name, &metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return obj.(*corev1.Namespace).Labels, nil
		},
		ServiceResolver: storeResolver{reader: ServiceStores{Services: svcs.services, Endpoints: svcs.endpoints, EndpointSlices: svcs.slices}.Reader()},
		Default:         func(obj runtime.Object) { scheme.Scheme.Default(obj) },
		Equivalents:     equivalentResources(b, c.CustomResources),
		Convert:         converter(c.CustomResources),
		Authorizer:      c.Authorizer,
		Metrics:         c.WebhookMetrics,
		X509:            c.WebhookX509,
		Logger:          c.Logger.With("plugin", "admission-webhook"),
	}
	m := mutating.New(mwc, opts)
	v := validating.New(vwc, opts)
	var wg sync.WaitGroup
	var started atomic.Bool
	if err := s.AddPostStartHook("start-admission-webhook-configuration-informers", func(ctx context.Context) error {
		started.Store(true)
		wg.Add(2)
		go func() { defer wg.Done(); m.Run(ctx) }()
		go func() { defer wg.Done(); v.Run(ctx) }()
		return nil
	}); err != nil {
		return nil, nil, err
	}
	s.AddDestroyFunc(func() {
		if started.Load() {
			wg.Wait()
		}
	})
	return m, v, nil
}

// storeResolver resolves webhook service references on the core server's
// Services and endpoints (package serviceresolver).
type storeResolver struct{ reader serviceresolver.Lister }

func (r storeResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return serviceresolver.Resolve(context.Background(), r.reader, namespace, name, port)
}

// policyPlugin makes the ValidatingAdmissionPolicy plugin over the
// policies' and bindings' stores (it writes the policies' type-checking
// status through their status subresource; params are read through the
// loopback client, when Config.LoopbackClientConfig is set), and the
// post-start hook that keeps them up to date until the server stops.
func policyPlugin(s *server.GenericServer, c Config, b *storageBuilder, ns clusterScoped) (*policyvalidating.Plugin, error) {
	policies, err := storageAs[*generic.Store](b, policiesResource)
	if err != nil {
		return nil, err
	}
	status, err := subresourceAs[*generic.StatusREST](b, policiesResource, "status")
	if err != nil {
		return nil, err
	}
	bindings, err := storageAs[*generic.Store](b, policyBindingsResource)
	if err != nil {
		return nil, err
	}
	opts := policyvalidating.Options{
		Namespaces: func(ctx context.Context, name string) (*corev1.Namespace, error) {
			obj, err := ns.Get(ctx, name, &metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return obj.(*corev1.Namespace), nil
		},
		Authorizer:  c.Authorizer,
		Equivalents: equivalentResources(b, c.CustomResources),
		Convert:     converter(c.CustomResources),
		Logger:      c.Logger.With("plugin", policyvalidating.PluginName),
	}
	var statusWriter policyvalidating.StatusWriter = validatingadmissionpolicy.StatusWriter{Status: status}
	if c.LoopbackClientConfig != nil {
		opts.Params = params.New(c.LoopbackClientConfig)
		// As upstream's status controller: server-side apply through the API.
		statusWriter = policyvalidating.NewApplyStatusWriter(c.LoopbackClientConfig)
	}
	p := policyvalidating.New(policies, bindings, statusWriter, opts)
	var wg sync.WaitGroup
	var started atomic.Bool
	if err := s.AddPostStartHook("start-validating-admission-policy-informers", func(ctx context.Context) error {
		started.Store(true)
		wg.Add(1)
		go func() { defer wg.Done(); p.Run(ctx) }()
		return nil
	}); err != nil {
		return nil, err
	}
	s.AddDestroyFunc(func() {
		if started.Load() {
			wg.Wait()
		}
	})
	return p, nil
}

// CustomResourceVersions are the served versions of custom resources
// (apiextensions.CustomResources).
type CustomResourceVersions interface {
	// Versions returns the kinds of the served versions of gr, in the
	// CRD's order (nil: not a served custom resource).
	Versions(gr schema.GroupResource) []schema.GroupVersionKind
	// Convert converts a custom resource to another served version.
	Convert(ctx context.Context, obj *unstructured.Unstructured, to schema.GroupVersion) (*unstructured.Unstructured, error)
}

// equivalentResources returns, for matchPolicy Equivalent, the other
// group-versions of the tables that serve a resource (autoscaling/v1 and
// v2 horizontalpodautoscalers), with their kinds, in version order, or
// the other served versions of a custom resource (crs, optional), in
// the CRD's order.
func equivalentResources(b *storageBuilder, crs CustomResourceVersions) func(schema.GroupVersionResource) []webhook.Equivalent {
	byGR := map[schema.GroupResource][]webhook.Equivalent{}
	for gvr := range b.lines {
		rs, err := b.storage(gvr)
		if err != nil {
			continue
		}
		kinds, _, err := scheme.Scheme.ObjectKinds(rs.storage.New())
		if err != nil {
			continue
		}
		for _, k := range kinds {
			if k.GroupVersion() == gvr.GroupVersion() {
				byGR[gvr.GroupResource()] = append(byGR[gvr.GroupResource()], webhook.Equivalent{Resource: gvr, Kind: k})
				break
			}
		}
	}
	for gr, eqs := range byGR {
		if len(eqs) < 2 {
			delete(byGR, gr)
			continue
		}
		slices.SortFunc(eqs, func(x, y webhook.Equivalent) int { return strings.Compare(x.Resource.Version, y.Resource.Version) })
	}
	return func(gvr schema.GroupVersionResource) []webhook.Equivalent {
		eqs, builtin := byGR[gvr.GroupResource()]
		if !builtin && crs != nil {
			for _, k := range crs.Versions(gvr.GroupResource()) {
				eqs = append(eqs, webhook.Equivalent{Resource: gvr.GroupResource().WithVersion(k.Version), Kind: k})
			}
		}
		out := make([]webhook.Equivalent, 0, len(eqs))
		for _, e := range eqs {
			if e.Resource != gvr {
				out = append(out, e)
			}
		}
		return out
	}
}

// converter converts built-in objects through the scheme's conversions
// and custom resources (crs, optional) through their CRD's.
func converter(crs CustomResourceVersions) func(ctx context.Context, obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	return func(ctx context.Context, obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return convertBuiltin(obj, to)
		}
		if crs == nil {
			return nil, fmt.Errorf("cannot convert %s to %s", u.GroupVersionKind(), to)
		}
		out, err := crs.Convert(ctx, u, to.GroupVersion())
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// convertBuiltin converts a built-in object to another version of its
// kind through the scheme's conversions.
func convertBuiltin(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	out, err := scheme.Scheme.New(to)
	if err != nil {
		return nil, err
	}
	if err := scheme.Scheme.Convert(obj, out, nil); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(to)
	return out, nil
}
