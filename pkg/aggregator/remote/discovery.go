package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// acceptAggregated asks for aggregated discovery only, as kube-aggregator
// does: a backend that answers anything else is asked for the legacy
// document instead.
const acceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

// discoveryResult is what one discovery fetch learned about a
// group-version.
type discoveryResult struct {
	resources   []metav1.APIResource
	notModified bool   // the aggregated list did not change: keep what was fetched
	etag        string // the aggregated list's ETag; "" after a legacy fetch
}

// fetchDiscovery gets gv's resources from the backend: from its aggregated
// discovery (If-None-Match etag), else from the legacy APIResourceList. A
// backend whose aggregated list lacks gv serves it with no resources, as
// upstream.
func fetchDiscovery(ctx context.Context, cl *client, gv schema.GroupVersion, etag string) (discoveryResult, error) {
	root, legacy := "/apis", "/apis/"+gv.Group+"/"+gv.Version
	if gv.Group == "" {
		root, legacy = "/api", "/api/"+gv.Version
	}
	resp, err := cl.get(ctx, root, acceptAggregated, etag, discoveryUser)
	if err != nil {
		return discoveryResult{}, err
	}
	switch {
	case resp.status == http.StatusNotModified && etag != "":
		return discoveryResult{notModified: true, etag: etag}, nil
	case resp.status == http.StatusOK && isAggregated(resp.header.Get("Content-Type")):
		resources, err := decodeAggregated(resp.body, gv)
		if err != nil {
			return discoveryResult{}, fmt.Errorf("GET %s: %w", root, err)
		}
		return discoveryResult{resources: resources, etag: resp.header.Get("Etag")}, nil
	}

	resp, err = cl.get(ctx, legacy, "application/json", "", aggregatorUser)
	if err != nil {
		return discoveryResult{}, err
	}
	if resp.status != http.StatusOK {
		return discoveryResult{}, statusError(legacy, resp)
	}
	resources, err := decodeLegacy(resp.body, gv)
	if err != nil {
		return discoveryResult{}, fmt.Errorf("GET %s: %w", legacy, err)
	}
	return discoveryResult{resources: resources}, nil
}

// isAggregated reports whether contentType is an aggregated discovery list
// (apidiscovery.k8s.io v2 or v2beta1, whose JSON is the same).
func isAggregated(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	v := params["v"]
	return params["g"] == "apidiscovery.k8s.io" && (v == "v2" || v == "v2beta1") && params["as"] == "APIGroupDiscoveryList"
}

// decodeAggregated decodes an APIGroupDiscoveryList and returns gv's
// resources in APIResourceList form (subresources as "<parent>/<sub>"),
// which the discovery manager converts back.
func decodeAggregated(body []byte, gv schema.GroupVersion) ([]metav1.APIResource, error) {
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decode aggregated discovery: %w", err)
	}
	if list.Kind != "APIGroupDiscoveryList" {
		return nil, fmt.Errorf("decode aggregated discovery: kind %q, want APIGroupDiscoveryList", list.Kind)
	}
	for _, g := range list.Items {
		if g.Name != gv.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == gv.Version {
				return fromAggregated(v.Resources), nil
			}
		}
	}
	return nil, nil
}

// fromAggregated converts aggregated resources to APIResources. The
// response kind's group and version become the APIResource's, so that
// converting back gives the same responseKind; resources and subresources
// without a usable name are dropped.
func fromAggregated(in []apidiscoveryv2.APIResourceDiscovery) []metav1.APIResource {
	var out []metav1.APIResource
	for _, r := range in {
		if !validName(r.Resource) {
			continue
		}
		namespaced := r.Scope == apidiscoveryv2.ScopeNamespace
		a := metav1.APIResource{
			Name:         r.Resource,
			SingularName: r.SingularResource,
			Namespaced:   namespaced,
			Verbs:        r.Verbs,
			ShortNames:   r.ShortNames,
			Categories:   r.Categories,
		}
		if k := r.ResponseKind; k != nil {
			a.Group, a.Version, a.Kind = k.Group, k.Version, k.Kind
		}
		out = append(out, a)
		for _, sub := range r.Subresources {
			if !validName(sub.Subresource) {
				continue
			}
			sa := metav1.APIResource{Name: r.Resource + "/" + sub.Subresource, Namespaced: namespaced, Verbs: sub.Verbs}
			if k := sub.ResponseKind; k != nil {
				sa.Group, sa.Version, sa.Kind = k.Group, k.Version, k.Kind
			}
			out = append(out, sa)
		}
	}
	return out
}

func validName(s string) bool { return s != "" && !strings.Contains(s, "/") }

// decodeLegacy decodes gv's APIResourceList.
func decodeLegacy(body []byte, gv schema.GroupVersion) ([]metav1.APIResource, error) {
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decode resource list: %w", err)
	}
	if list.Kind != "APIResourceList" {
		return nil, fmt.Errorf("decode resource list: kind %q, want APIResourceList", list.Kind)
	}
	if list.GroupVersion != "" && list.GroupVersion != gv.String() {
		return nil, fmt.Errorf("decode resource list: groupVersion %q, want %q", list.GroupVersion, gv)
	}
	var out []metav1.APIResource
	for _, r := range list.APIResources {
		parent, sub, isSub := strings.Cut(r.Name, "/")
		if !validName(parent) || (isSub && !validName(sub)) {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// process runs one round of fetches for s (busy) and reports whether all
// of it succeeded.
func (c *Controller) process(ctx context.Context, s *service) bool {
	c.mu.Lock()
	api, available := s.api, s.available
	c.mu.Unlock()

	if !equalServiceRef(s.fetchedFor, api.Spec.Service) {
		// A different backend: its ETags mean nothing here.
		s.discETag, s.v2ETag, s.v2Hash, s.v3ETag = "", "", "", ""
		s.fetchedFor = api.Spec.Service.DeepCopy()
	}
	if !available {
		// kube-aggregator's proxy refuses an APIService that is not
		// Available, so its discovery goes Stale (keeping the last
		// resources) and its OpenAPI stays as last fetched. Sync asks
		// again when it becomes Available.
		c.setStale(s)
		return true
	}

	cl, err := c.newClient(ctx, api)
	if err != nil {
		c.setStale(s)
		c.logger.Info("backend not resolved", "apiService", api.Name, "err", err)
		return false
	}

	ok := true
	res, err := fetchDiscovery(ctx, cl, s.gv, s.discETag)
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		ok = false
		c.setStale(s)
		c.logger.Info("discovery fetch failed", "apiService", api.Name, "err", err)
		if errors.Is(err, errUnreachable) {
			return false
		}
	} else {
		s.discETag = res.etag
		c.setCurrent(s, res)
	}

	if c.cfg.OpenAPI == nil {
		return ok
	}
	if err := c.syncV2(ctx, cl, s); err != nil {
		ok = false
		c.logger.Info("openapi v2 fetch failed", "apiService", api.Name, "err", err)
		if errors.Is(err, errUnreachable) || ctx.Err() != nil {
			return false
		}
	}
	if err := c.syncV3(ctx, cl, s); err != nil {
		ok = false
		c.logger.Info("openapi v3 fetch failed", "apiService", api.Name, "err", err)
	}
	return ok
}

func (c *Controller) setStale(s *service) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.current = false
	c.publishLocked(s)
}

func (c *Controller) setCurrent(s *service, res discoveryResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !res.notModified {
		s.resources = res.resources
	}
	s.current = true
	c.publishLocked(s)
}

func equalServiceRef(a, b *apiregistrationv1.ServiceReference) bool {
	return reflect.DeepEqual(a, b)
}
