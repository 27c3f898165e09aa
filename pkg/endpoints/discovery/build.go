package discovery

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// snapshot is everything served, for one state of the Manager. It is never
// changed once published.
type snapshot struct {
	// coreVersions are the versions of the legacy group, preferred first.
	coreVersions []string
	// apiVersions is /api for Config.ExternalAddress; nil when no core
	// group is held or the address comes from each request.
	apiVersions *document
	groupList   *document            // /apis
	groups      map[string]*document // /apis/<group>
	aggAPI      *aggregatedDoc       // /api, aggregated
	aggAPIs     *aggregatedDoc       // /apis, aggregated
}

// aggregatedDoc is an aggregated discovery list in the served versions. Its
// ETag and v2beta1 form are computed on first use, so that a burst of
// changes (CRDs created at start) does not pay for them on every change.
type aggregatedDoc struct {
	codecs *codecs
	list   *apidiscoveryv2.APIGroupDiscoveryList
	v2     *document

	etagOnce sync.Once
	etag     string // quoted

	betaOnce sync.Once
	beta     *document
}

// ETag returns upstream's ETag: the SHA-512 of the JSON list without its
// TypeMeta, in upper-case hex, quoted.
func (d *aggregatedDoc) ETag() string {
	d.etagOnce.Do(func() {
		bare := *d.list
		bare.TypeMeta = metav1.TypeMeta{}
		body, err := json.Marshal(&bare)
		if err != nil { // cannot happen for these types
			panic(fmt.Sprintf("marshal discovery list: %v", err))
		}
		d.etag = strconv.Quote(fmt.Sprintf("%X", sha512.Sum512(body)))
	})
	return d.etag
}

// V2Beta1 returns the list as apidiscovery.k8s.io/v2beta1.
func (d *aggregatedDoc) V2Beta1() *document {
	d.betaOnce.Do(func() { d.beta = newDocument(d.codecs, toV2Beta1(d.list)) })
	return d.beta
}

// build makes a snapshot of the entries served; m.mu is held (or m is
// new).
func (m *Manager) build() *snapshot {
	eff := m.effectiveLocked()
	entries := make([]*entry, 0, len(eff))
	var core []*entry
	for _, e := range eff {
		if e.gv.Group == "" {
			core = append(core, e)
			continue
		}
		entries = append(entries, e)
	}
	sortVersions(core)

	s := &snapshot{groups: map[string]*document{}}
	for _, e := range core {
		s.coreVersions = append(s.coreVersions, e.gv.Version)
	}
	if len(core) > 0 && m.cfg.ExternalAddress != "" {
		s.apiVersions = newDocument(m.codecs, apiVersions(s.coreVersions, m.cfg.ExternalAddress))
	}

	list := &metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   []metav1.APIGroup{},
	}
	for _, group := range legacyOrder(entries) {
		g := apiGroup(group)
		list.Groups = append(list.Groups, g)
		one := g
		one.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		s.groups[g.Name] = newDocument(m.codecs, &one)
	}
	s.groupList = newDocument(m.codecs, list)

	var coreGroups [][]*entry
	if len(core) > 0 {
		coreGroups = [][]*entry{core}
	}
	s.aggAPI = m.aggregatedDoc(coreGroups)
	s.aggAPIs = m.aggregatedDoc(aggregatedOrder(entries))
	return s
}

// apiVersions is the legacy /api document; kube strips its apiVersion.
func apiVersions(versions []string, address string) *metav1.APIVersions {
	return &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: versions,
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: address},
		},
	}
}

func apiGroup(versions []*entry) metav1.APIGroup {
	g := metav1.APIGroup{Name: versions[0].gv.Group}
	for _, e := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{
			GroupVersion: e.gv.String(),
			Version:      e.gv.Version,
		})
	}
	g.PreferredVersion = g.Versions[0]
	return g
}

func (m *Manager) aggregatedDoc(groups [][]*entry) *aggregatedDoc {
	items := make([]apidiscoveryv2.APIGroupDiscovery, 0, len(groups))
	for _, versions := range groups {
		g := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: versions[0].gv.Group}}
		for _, e := range versions {
			g.Versions = append(g.Versions, apidiscoveryv2.APIVersionDiscovery{
				Version:   e.gv.Version,
				Resources: e.aggregated,
				Freshness: e.freshness,
			})
		}
		items = append(items, g)
	}
	list := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: apidiscoveryv2.SchemeGroupVersion.String()},
		Items:    items,
	}
	return &aggregatedDoc{codecs: m.codecs, list: list, v2: newDocument(m.codecs, list)}
}

// sortVersions orders the versions of one group: version priority, highest
// first, then kube-aware version order.
func sortVersions(es []*entry) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.priority.Version != b.priority.Version {
			return a.priority.Version > b.priority.Version
		}
		return version.CompareKubeAwareVersionStrings(a.gv.Version, b.gv.Version) > 0
	})
}

// legacyOrder groups entries as the aggregator's /apis does: group-versions
// sorted by group priority then APIService name ("<version>.<group>"),
// groups in the order of their first group-version.
func legacyOrder(entries []*entry) [][]*entry {
	es := append([]*entry(nil), entries...)
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.priority.Group != b.priority.Group {
			return a.priority.Group > b.priority.Group
		}
		return a.gv.Version+"."+a.gv.Group < b.gv.Version+"."+b.gv.Group
	})
	var out [][]*entry
	index := map[string]int{}
	for _, e := range es {
		i, ok := index[e.gv.Group]
		if !ok {
			i = len(out)
			index[e.gv.Group] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], e)
	}
	for _, g := range out {
		sortVersions(g)
	}
	return out
}

// aggregatedOrder groups entries as aggregated discovery does: groups by the
// highest group priority of their versions, then by name.
func aggregatedOrder(entries []*entry) [][]*entry {
	byGroup := map[string][]*entry{}
	prio := map[string]int32{}
	for _, e := range entries {
		g := e.gv.Group
		if p, ok := prio[g]; !ok || e.priority.Group > p {
			prio[g] = e.priority.Group
		}
		byGroup[g] = append(byGroup[g], e)
	}
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if prio[a] != prio[b] {
			return prio[a] > prio[b]
		}
		return a < b
	})
	out := make([][]*entry, 0, len(names))
	for _, g := range names {
		vs := byGroup[g]
		sortVersions(vs)
		out = append(out, vs)
	}
	return out
}

// toAggregated converts an APIResourceList's resources to aggregated
// discovery, as kube's installer does: subresources ("<parent>/<sub>") are
// nested under their parent (created, with an empty responseKind, if the
// list has none); a parent and its subresource must have the same scope.
func toAggregated(gv schema.GroupVersion, list []metav1.APIResource, qualify bool) ([]apidiscoveryv2.APIResourceDiscovery, error) {
	kind := func(r metav1.APIResource) *metav1.GroupVersionKind {
		k := &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
		if qualify && k.Group == "" && k.Version == "" {
			k.Group, k.Version = gv.Group, gv.Version
		}
		return k
	}
	scope := func(r metav1.APIResource) apidiscoveryv2.ResourceScope {
		if r.Namespaced {
			return apidiscoveryv2.ScopeNamespace
		}
		return apidiscoveryv2.ScopeCluster
	}
	var out []apidiscoveryv2.APIResourceDiscovery
	parents := map[string]int{}
	for _, r := range list {
		if strings.Contains(r.Name, "/") {
			continue
		}
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource:         r.Name,
			ResponseKind:     kind(r),
			Scope:            scope(r),
			SingularResource: r.SingularName,
			Verbs:            r.Verbs,
			ShortNames:       r.ShortNames,
			Categories:       r.Categories,
		})
		parents[r.Name] = len(out) - 1
	}
	for _, r := range list {
		parent, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			continue
		}
		i, exists := parents[parent]
		if !exists {
			out = append(out, apidiscoveryv2.APIResourceDiscovery{
				Resource: parent,
				Scope:    scope(r),
				// old clients (client-go 0.26.0–0.26.3) dereference it
				ResponseKind: &metav1.GroupVersionKind{},
			})
			i = len(out) - 1
			parents[parent] = i
		}
		if out[i].Scope != scope(r) {
			return nil, fmt.Errorf("resource %s (scope %s) and subresource %s (scope %s) differ in scope", parent, out[i].Scope, sub, scope(r))
		}
		s := apidiscoveryv2.APISubresourceDiscovery{
			Subresource:  sub,
			Verbs:        r.Verbs,
			ResponseKind: &metav1.GroupVersionKind{},
		}
		if r.Kind != "" {
			s.ResponseKind = kind(r)
		}
		out[i].Subresources = append(out[i].Subresources, s)
	}
	return out, nil
}
