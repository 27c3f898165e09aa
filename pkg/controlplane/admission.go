package controlplane

import (
	"context"
	"fmt"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/namespacelifecycle"
	"github.com/kapi-dev/kapi/pkg/admission/plugins"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// admissionPlugins builds the plugins c.AdmissionPlugins selects, reading
// the resources they need from b's stores (nil selection: only
// NamespaceLifecycle, for servers built without options).
func admissionPlugins(c Config, b *storageBuilder, namespaces plugins.Reader, prebuilt map[string]admission.Plugin) ([]admission.Plugin, error) {
	sel := c.AdmissionPlugins
	if sel == nil {
		sel = &plugins.Selection{Names: []string{namespacelifecycle.PluginName}}
	}
	deps := plugins.Deps{
		Logger:                              c.Logger,
		Namespaces:                          namespaces,
		Prebuilt:                            prebuilt,
		PodSecurityMetrics:                  c.PodSecurityMetrics,
		Authorizer:                          c.Authorizer,
		DefaultNotReadyTolerationSeconds:    sel.DefaultNotReadyTolerationSeconds,
		DefaultUnreachableTolerationSeconds: sel.DefaultUnreachableTolerationSeconds,
	}
	for _, r := range []struct {
		into *plugins.Reader
		gvr  schema.GroupVersionResource
	}{
		{&deps.ServiceAccounts, serviceAccountsResource},
		{&deps.LimitRanges, limitRangesResource},
		{&deps.Pods, podsResource},
		{&deps.Nodes, nodesResource},
		{&deps.PriorityClasses, priorityClassesResource},
		{&deps.StorageClasses, storageClassesResource},
		{&deps.RuntimeClasses, runtimeClassesResource},
		{&deps.IngressClasses, ingressClassesResource},
	} {
		st, err := storageAs[getLister](b, r.gvr)
		if err != nil {
			return nil, fmt.Errorf("admission: %w", err)
		}
		*r.into = storeReader{store: st, gvr: r.gvr}
	}
	ps, unavailable, err := plugins.New(sel.Names, sel.Configs, deps)
	if err != nil {
		return nil, err
	}
	plugins.LogUnavailable(c.Logger, unavailable)
	return ps, nil
}

// limitRangesResource is read by LimitRanger (serviceAccountsResource,
// read by the ServiceAccount plugin, is in serviceaccounts.go).
var (
	limitRangesResource    = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}
	storageClassesResource = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}
	runtimeClassesResource = schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}
	ingressClassesResource = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}
)

// storeReader reads a store as the server itself (no authorization or
// admission), with the request context of a get or list of its resource
// so that errors name it.
type storeReader struct {
	store getLister
	gvr   schema.GroupVersionResource
}

// getLister is a storage that gets and lists (a *generic.Store, or a type
// embedding one, as priorityclasses' REST).
type getLister interface {
	rest.Storage
	rest.Getter
	rest.Lister
}

func (r storeReader) ctx(ctx context.Context, verb, namespace, name string) context.Context {
	prefix := "apis"
	if r.gvr.Group == "" {
		prefix = "api"
	}
	return request.WithRequestInfo(request.WithNamespace(ctx, namespace), &request.RequestInfo{
		IsResourceRequest: true,
		Verb:              verb,
		APIPrefix:         prefix,
		APIGroup:          r.gvr.Group,
		APIVersion:        r.gvr.Version,
		Namespace:         namespace,
		Resource:          r.gvr.Resource,
		Name:              name,
	})
}

func (r storeReader) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	return r.store.Get(r.ctx(ctx, "get", namespace, name), name, &metav1.GetOptions{})
}

func (r storeReader) List(ctx context.Context, namespace string) (runtime.Object, error) {
	return r.store.List(r.ctx(ctx, "list", namespace, ""), &metainternalversion.ListOptions{})
}

// namespaceReader reads namespaces through the namespaces storage.
type namespaceReader struct{ clusterScoped }

func (n namespaceReader) Get(ctx context.Context, _, name string) (runtime.Object, error) {
	return n.clusterScoped.Get(ctx, name, &metav1.GetOptions{})
}

// namespaceReader deliberately does not implement plugins.CachedReader:
// NamespaceLifecycle reads the namespace from storage before every
// namespaced create, as kapi always has, although upstream's plugin reads
// its informer first. On an etcd cluster that linearizable read waits for
// a new leader when the old one is lost, so the create after it does not
// meet the election; with the cache read, creates sent during an election
// failed with 500s (internal/app TestEtcdClusterLoseOneMember: issue 20
// asks that losing one member be invisible beyond requests in flight).
func (n namespaceReader) List(ctx context.Context, _ string) (runtime.Object, error) {
	return nil, fmt.Errorf("admission: listing namespaces is not supported")
}
