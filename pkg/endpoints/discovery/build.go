package discovery

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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

	served atomic.Bool // counted in Config.AggregationCount
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

// group is what the snapshots hold of one API group, built when one of
// its group-versions changes and shared by every snapshot until then, so
// that a change costs the work of its groups, not of everything held (a
// CRD added among a thousand).
type group struct {
	name string
	// versions are the effective entries, in sortVersions order.
	versions []*entry
	// legacyPrio and legacyName place the group in /apis: those of its
	// first entry by group priority (highest first) then APIService name
	// ("<version>.<group>"), as legacyOrder sorted all entries.
	legacyPrio int32
	legacyName string
	// aggPrio places it in aggregated discovery: the highest group
	// priority of its versions.
	aggPrio int32

	legacy     metav1.APIGroup // its entry of /apis
	doc        *document       // /apis/<group>
	aggregated apidiscoveryv2.APIGroupDiscovery
}

// newGroup builds the group of versions (not empty; one group).
func newGroup(m *Manager, versions []*entry) *group {
	sortVersions(versions)
	g := &group{name: versions[0].gv.Group, versions: versions, legacyPrio: versions[0].priority.Group, aggPrio: versions[0].priority.Group}
	for _, e := range versions {
		name := e.gv.Version + "." + e.gv.Group
		if p := e.priority.Group; p > g.legacyPrio || (p == g.legacyPrio && (g.legacyName == "" || name < g.legacyName)) {
			g.legacyPrio, g.legacyName = p, name
		}
		g.aggPrio = max(g.aggPrio, e.priority.Group)
	}
	g.legacy = apiGroup(versions)
	one := g.legacy
	one.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	g.doc = newDocument(m.codecs, &one)
	g.aggregated = aggregatedGroup(versions)
	return g
}

// regroupLocked rebuilds the groups named from the entries held (dropping
// those with none left). m.mu is held.
func (m *Manager) regroupLocked(names map[string]bool) {
	for name := range names {
		var versions []*entry
		for gv := range m.byGroup[name] {
			if e, ok := m.remotes[gv]; ok {
				versions = append(versions, e)
			} else if e, ok := m.entries[gv]; ok {
				versions = append(versions, e)
			}
		}
		var g *group
		if len(versions) > 0 {
			g = newGroup(m, versions)
		}
		switch {
		case name == "":
			m.core = g
		case g == nil:
			delete(m.groups, name)
		default:
			m.groups[name] = g
		}
	}
}

// build makes a snapshot of the groups held; m.mu is held (or m is new).
// The core group's documents are reused from prev unless core changed.
func (m *Manager) build(prev *snapshot, coreChanged bool) *snapshot {
	s := &snapshot{groups: make(map[string]*document, len(m.groups))}
	if prev != nil && !coreChanged {
		s.coreVersions, s.apiVersions, s.aggAPI = prev.coreVersions, prev.apiVersions, prev.aggAPI
	} else {
		var coreItems []apidiscoveryv2.APIGroupDiscovery
		if core := m.core; core != nil {
			for _, e := range core.versions {
				s.coreVersions = append(s.coreVersions, e.gv.Version)
			}
			if m.cfg.ExternalAddress != "" {
				s.apiVersions = newDocument(m.codecs, apiVersions(s.coreVersions, m.cfg.ExternalAddress))
			}
			coreItems = []apidiscoveryv2.APIGroupDiscovery{core.aggregated}
		}
		s.aggAPI = m.aggregatedDoc(coreItems)
	}

	groups := make([]*group, 0, len(m.groups))
	for _, g := range m.groups {
		groups = append(groups, g)
	}
	list := &metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   make([]metav1.APIGroup, 0, len(groups)),
	}
	sort.Slice(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.legacyPrio != b.legacyPrio {
			return a.legacyPrio > b.legacyPrio
		}
		return a.legacyName < b.legacyName
	})
	for _, g := range groups {
		list.Groups = append(list.Groups, g.legacy)
		s.groups[g.name] = g.doc
	}
	s.groupList = newDocument(m.codecs, list)

	sort.Slice(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.aggPrio != b.aggPrio {
			return a.aggPrio > b.aggPrio
		}
		return a.name < b.name
	})
	items := make([]apidiscoveryv2.APIGroupDiscovery, 0, len(groups))
	for _, g := range groups {
		items = append(items, g.aggregated)
	}
	s.aggAPIs = m.aggregatedDoc(items)
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

// aggregatedGroup is the aggregated discovery of one group's versions
// (in sortVersions order).
func aggregatedGroup(versions []*entry) apidiscoveryv2.APIGroupDiscovery {
	g := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: versions[0].gv.Group}}
	for _, e := range versions {
		g.Versions = append(g.Versions, apidiscoveryv2.APIVersionDiscovery{
			Version:   e.gv.Version,
			Resources: e.aggregated,
			Freshness: e.freshness,
		})
	}
	return g
}

// aggregatedDoc is the aggregated discovery list of items, in order.
func (m *Manager) aggregatedDoc(items []apidiscoveryv2.APIGroupDiscovery) *aggregatedDoc {
	if items == nil {
		items = []apidiscoveryv2.APIGroupDiscovery{}
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
