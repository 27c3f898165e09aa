package aggregator

import (
	"context"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/aggregator/apiservice"
	"github.com/kapi-dev/kapi/pkg/aggregator/proxy"
)

// route is the proxy route of one non-local APIService.
type route struct {
	path    string
	handler *proxy.Handler
}

// proxyPath is where svc's API is served: /apis/<group>/<version>, or
// /api for the legacy group (as upstream).
func proxyPath(svc *apiregistrationv1.APIService) string {
	if svc.Spec.Group == "" {
		return "/api"
	}
	return "/apis/" + svc.Spec.Group + "/" + svc.Spec.Version
}

// runRegistration keeps one proxy route per non-local APIService (the
// apiservice-registration-controller): after the first sync it closes
// RegistrationSignal; after each it tells cfg.OnChange.
func (a *Aggregator) runRegistration(ctx context.Context, changed <-chan struct{}) {
	if !a.informer.waitSynced(ctx) {
		return
	}
	var last map[string]string
	for {
		list := a.informer.list()
		a.syncRoutes(list)
		a.closeInitiated()
		if cur := versions(list); a.cfg.OnChange != nil && !sameVersions(cur, last) {
			a.cfg.OnChange(list)
			last = cur
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

func versions(list []*apiregistrationv1.APIService) map[string]string {
	m := make(map[string]string, len(list))
	for _, s := range list {
		m[s.Name] = s.ResourceVersion
	}
	return m
}

func sameVersions(a, b map[string]string) bool {
	if a == nil || b == nil || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// syncRoutes adds, updates and removes proxy routes to match list.
func (a *Aggregator) syncRoutes(list []*apiregistrationv1.APIService) {
	a.routesMu.Lock()
	defer a.routesMu.Unlock()
	remote := map[string]bool{}
	for _, svc := range list {
		if apiservice.IsLocal(svc) {
			continue
		}
		remote[svc.Name] = true
		t, err := a.transportFor(svc)
		if err != nil {
			a.logger.Warn("apiservice transport", "apiservice", svc.Name, "err", err)
		}
		r, ok := a.routes[svc.Name]
		if !ok {
			r = &route{path: proxyPath(svc), handler: proxy.NewHandler(a.cfg.Services, a.logger, a.x509)}
		}
		r.handler.Update(svc, t, err)
		if !ok {
			a.routes[svc.Name] = r
			a.handler.HandleREST(r.path, r.handler)
			a.logger.Info("proxying apiservice", "apiservice", svc.Name, "path", r.path)
		}
	}
	for name, r := range a.routes {
		if remote[name] {
			continue
		}
		a.handler.UnregisterREST(r.path)
		delete(a.routes, name)
		a.logger.Info("stopped proxying apiservice", "apiservice", name, "path", r.path)
	}
	a.pruneTransports(remote)
}

// pruneTransports drops the transports of APIServices not in keep.
func (a *Aggregator) pruneTransports(keep map[string]bool) {
	a.transportsMu.Lock()
	defer a.transportsMu.Unlock()
	for name, c := range a.transports {
		if keep[name] {
			continue
		}
		if c.transport != nil {
			c.transport.CloseIdleConnections()
		}
		delete(a.transports, name)
	}
}
