package params

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Loopback reads params through a client made, on first use, from
// config (the server's loopback client config).
type Loopback struct {
	config func() (*rest.Config, error)

	once   sync.Once
	err    error
	client dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// New returns a Loopback reading through config().
func New(config func() (*rest.Config, error)) *Loopback { return &Loopback{config: config} }

func (l *Loopback) init() error {
	l.once.Do(func() {
		cfg, err := l.config()
		if err != nil {
			l.err = fmt.Errorf("loopback client: %w", err)
			return
		}
		cfg = rest.CopyConfig(cfg)
		cfg.UserAgent = "kapi-admission-policy-params"
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			l.err = err
			return
		}
		l.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
		l.client, l.err = dynamic.NewForConfig(cfg)
	})
	return l.err
}

func (l *Loopback) mapping(apiVersion, kind string) (*meta.RESTMapping, error) {
	if err := l.init(); err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	gk := gv.WithKind(kind).GroupKind()
	m, err := l.mapper.RESTMapping(gk, gv.Version)
	if meta.IsNoMatchError(err) {
		l.mapper.Reset()
		m, err = l.mapper.RESTMapping(gk, gv.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to find resource referenced by paramKind: '%s, Kind=%s': %w", apiVersion, kind, err)
	}
	return m, nil
}

// Namespaced implements validating.Params.
func (l *Loopback) Namespaced(apiVersion, kind string) (bool, error) {
	m, err := l.mapping(apiVersion, kind)
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func (l *Loopback) resource(apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	m, err := l.mapping(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	r := l.client.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace && namespace != "" {
		return r.Namespace(namespace), nil
	}
	return r, nil
}

// Get implements validating.Params.
func (l *Loopback) Get(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	r, err := l.resource(apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	u, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return u.Object, nil
}

// List implements validating.Params.
func (l *Loopback) List(ctx context.Context, apiVersion, kind, namespace string, sel labels.Selector) ([]map[string]any, error) {
	r, err := l.resource(apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	list, err := r.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(list.Items))
	for i := range list.Items {
		out[i] = list.Items[i].Object
	}
	return out, nil
}
