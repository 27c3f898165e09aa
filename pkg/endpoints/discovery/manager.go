package discovery

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Config configures a Manager. The zero value works.
type Config struct {
	// ExternalAddress is the serverAddress /api reports for clientCIDR
	// 0.0.0.0/0 ("host:port"; kube-apiserver uses its advertise address and
	// secure port). Empty means the Host of each request.
	ExternalAddress string

	// DisableAggregated serves only the legacy documents, whatever the
	// Accept header asks for.
	DisableAggregated bool

	// ServeV2Beta1 also serves aggregated discovery as
	// apidiscovery.k8s.io/v2beta1 (kubectl 1.26–1.29 ask for it). Off by
	// default, as in kube-apiserver 1.35 and later, which answer such
	// requests with the legacy documents.
	ServeV2Beta1 bool

	// AggregationCount, if set, counts each aggregated discovery list
	// (/api's, /apis') served for the first time since the change that
	// made it (NewAggregationCounter).
	AggregationCount prometheus.Counter

	Logger *slog.Logger
}

// NewAggregationCounter registers on reg (nil: not registered) and returns
// aggregator_discovery_aggregation_count_total, for
// Config.AggregationCount. kube-apiserver v1.37.2 (k8s.io/apiserver's
// aggregated discovery handler) computes an aggregated list lazily, when
// one is requested after a change, and counts each computation; kapi's
// lists are made at the change, and counted when first served.
func NewAggregationCounter(reg prometheus.Registerer) (prometheus.Counter, error) {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "aggregator_discovery_aggregation_count_total",
		Help: "[ALPHA] Counter of number of times discovery was aggregated",
	})
	if reg != nil {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Manager holds the group-versions of every server of a chain and serves
// discovery for them. It is safe for concurrent use; reads never take a
// lock: each change builds a new immutable snapshot.
type Manager struct {
	cfg    Config
	logger *slog.Logger
	codecs *codecs

	mu      sync.Mutex                     // serializes changes
	entries map[schema.GroupVersion]*entry // served by the chain
	// remotes are served by aggregated API servers ([Remote]). A remote
	// entry hides a local one of the same group-version (requests for it
	// are proxied) without removing it: it shows again when the remote
	// one goes.
	remotes map[schema.GroupVersion]*entry
	// byGroup indexes the group-versions of entries and remotes by
	// group; groups (all but the core group) and core are built from
	// them, each rebuilt only when one of its group-versions changes.
	byGroup map[string]map[schema.GroupVersion]bool
	groups  map[string]*group
	core    *group
	heads   []Mux           // where Install routed discovery
	routed  map[string]bool // groups whose /apis/<group> paths the heads route

	snap atomic.Pointer[snapshot]

	subscribers map[int]*subscriber // guarded by mu
	nextSub     int
}

// subscriber is one Subscribe or SubscribeChanges: its channel and, for
// SubscribeChanges, the group-versions changed since its last take.
type subscriber struct {
	ch      chan struct{}
	track   bool
	changed map[schema.GroupVersion]bool
}

// entry is one group-version as added.
type entry struct {
	gv         schema.GroupVersion
	priority   Priority
	resources  []metav1.APIResource
	aggregated []apidiscoveryv2.APIResourceDiscovery
	freshness  apidiscoveryv2.DiscoveryFreshness
}

// New returns an empty Manager.
func New(cfg Config) (*Manager, error) {
	c, err := newCodecs()
	if err != nil {
		return nil, fmt.Errorf("discovery codecs: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	m := &Manager{
		cfg:     cfg,
		logger:  logger,
		codecs:  c,
		entries: map[schema.GroupVersion]*entry{},
		remotes: map[schema.GroupVersion]*entry{},
		byGroup: map[string]map[schema.GroupVersion]bool{},
		groups:  map[string]*group{},
		routed:  map[string]bool{},
	}
	m.snap.Store(m.build(nil, true))
	return m, nil
}

// Option adjusts one AddGroupVersion call.
type Option func(*addOptions)

type addOptions struct {
	priority     *Priority
	qualifyKinds bool
	stale        bool
	remote       bool
}

// WithPriority sets gv's priority instead of [DefaultPriority] (an
// APIService's groupPriorityMinimum and versionPriority).
func WithPriority(p Priority) Option {
	return func(o *addOptions) { o.priority = &p }
}

// WithResponseKindGroupVersion fills an empty group and version in the
// aggregated responseKind of each resource and subresource with gv, as
// apiextensions-apiserver does for custom resources (built-in resources
// leave them empty unless the kind lives in another group-version, like
// deployments/scale's autoscaling/v1 Scale).
func WithResponseKindGroupVersion() Option {
	return func(o *addOptions) { o.qualifyKinds = true }
}

// Stale marks gv's aggregated discovery as freshness Stale (an aggregated
// API server whose discovery could not be refreshed) instead of Current.
func Stale() Option {
	return func(o *addOptions) { o.stale = true }
}

// Remote marks gv as served by an aggregated API server elsewhere, not by
// a server of this chain: [Manager.LocalGroupVersions] leaves it out.
func Remote() Option {
	return func(o *addOptions) { o.remote = true }
}

// AddGroupVersion adds gv with its resources (the APIResourceList the
// installer serves at /apis/<group>/<version>, subresources named
// "<resource>/<sub>"), or replaces what gv had. The resources are copied.
func (m *Manager) AddGroupVersion(gv schema.GroupVersion, resources []metav1.APIResource, opts ...Option) error {
	return m.Update(map[schema.GroupVersion][]metav1.APIResource{gv: resources}, nil, opts...)
}

// RemoveGroupVersion removes gv as served by the chain, or with [Remote]
// as served by an aggregated API server; removing an absent gv does
// nothing.
func (m *Manager) RemoveGroupVersion(gv schema.GroupVersion, opts ...Option) {
	// Removing cannot fail.
	_ = m.Update(nil, []schema.GroupVersion{gv}, opts...)
}

// Update adds (or replaces) every group-version of set with its resources
// and removes those of remove, in one step: discovery shows all of the
// changes or none, and is rebuilt once (a CRD's served versions appear
// together; the CRDs stored at start are added in one go). opts apply to
// every group-version, as for [Manager.AddGroupVersion] and
// [Manager.RemoveGroupVersion]. A gv in both is added. Nothing changes
// when an error is returned.
func (m *Manager) Update(set map[schema.GroupVersion][]metav1.APIResource, remove []schema.GroupVersion, opts ...Option) error {
	var o addOptions
	for _, opt := range opts {
		opt(&o)
	}
	entries := make(map[schema.GroupVersion]*entry, len(set))
	for gv, resources := range set {
		e, err := newEntry(gv, resources, o)
		if err != nil {
			return err
		}
		entries[gv] = e
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	to := m.entries
	if o.remote {
		to = m.remotes
	}
	changed := map[string]bool{}
	for _, gv := range remove {
		if _, ok := to[gv]; ok {
			delete(to, gv)
			changed[gv.Group] = true
			_, local := m.entries[gv]
			_, remote := m.remotes[gv]
			if !local && !remote {
				delete(m.byGroup[gv.Group], gv)
				if len(m.byGroup[gv.Group]) == 0 {
					delete(m.byGroup, gv.Group)
				}
			}
		}
	}
	for gv, e := range entries {
		to[gv] = e
		changed[gv.Group] = true
		if m.byGroup[gv.Group] == nil {
			m.byGroup[gv.Group] = map[schema.GroupVersion]bool{}
		}
		m.byGroup[gv.Group][gv] = true
	}
	if len(changed) > 0 {
		m.trackLocked(entries, remove)
		m.regroupLocked(changed)
		m.updateLocked(changed[""])
	}
	return nil
}

// trackLocked records the group-versions of a change for the
// subscribers that take them.
func (m *Manager) trackLocked(set map[schema.GroupVersion]*entry, remove []schema.GroupVersion) {
	for _, sub := range m.subscribers {
		if !sub.track {
			continue
		}
		if sub.changed == nil {
			sub.changed = map[schema.GroupVersion]bool{}
		}
		for gv := range set {
			sub.changed[gv] = true
		}
		for _, gv := range remove {
			sub.changed[gv] = true
		}
	}
}

// newEntry makes the entry of gv, its resources copied.
func newEntry(gv schema.GroupVersion, resources []metav1.APIResource, o addOptions) (*entry, error) {
	if gv.Version == "" {
		return nil, errors.New("add group-version: version must not be empty")
	}
	e := &entry{
		gv:        gv,
		priority:  DefaultPriority(gv),
		resources: make([]metav1.APIResource, len(resources)),
		freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
	}
	if o.priority != nil {
		e.priority = *o.priority
	}
	if o.stale {
		e.freshness = apidiscoveryv2.DiscoveryFreshnessStale
	}
	for i := range resources {
		resources[i].DeepCopyInto(&e.resources[i])
	}
	agg, err := toAggregated(gv, e.resources, o.qualifyKinds)
	if err != nil {
		return nil, fmt.Errorf("add group-version %s: %w", gv, err)
	}
	e.aggregated = agg
	return e, nil
}

// effectiveLocked returns the entries served: the remote one where a
// group-version has both.
func (m *Manager) effectiveLocked() map[schema.GroupVersion]*entry {
	out := make(map[schema.GroupVersion]*entry, len(m.entries)+len(m.remotes))
	for gv, e := range m.entries {
		out[gv] = e
	}
	for gv, e := range m.remotes {
		out[gv] = e
	}
	return out
}

// GroupVersions returns the group-versions held, local and remote, in no
// particular order.
func (m *Manager) GroupVersions() []schema.GroupVersion {
	m.mu.Lock()
	defer m.mu.Unlock()
	eff := m.effectiveLocked()
	out := make([]schema.GroupVersion, 0, len(eff))
	for gv := range eff {
		out = append(out, gv)
	}
	return out
}

// LocalGroupVersions returns the group-versions added without [Remote]
// (those the servers of this chain serve), sorted by group then version.
func (m *Manager) LocalGroupVersions() []schema.GroupVersion {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]schema.GroupVersion, 0, len(m.entries))
	for gv := range m.entries {
		out = append(out, gv)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Version < out[j].Version
	})
	return out
}

// Subscribe returns a channel that receives after every change of the
// group-versions held (notifications coalesce: one pending value at most)
// and a function that ends the subscription.
func (m *Manager) Subscribe() (<-chan struct{}, func()) {
	ch, _, cancel := m.subscribe(false)
	return ch, cancel
}

// SubscribeChanges is [Manager.Subscribe] that also says what changed:
// take returns the group-versions added, replaced or removed (local or
// remote) since the subscription began or take was last called, so
// that a subscriber's work follows the change, not everything held.
func (m *Manager) SubscribeChanges() (changes <-chan struct{}, take func() []schema.GroupVersion, cancel func()) {
	return m.subscribe(true)
}

func (m *Manager) subscribe(track bool) (<-chan struct{}, func() []schema.GroupVersion, func()) {
	sub := &subscriber{ch: make(chan struct{}, 1), track: track}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.subscribers == nil {
		m.subscribers = map[int]*subscriber{}
	}
	id := m.nextSub
	m.nextSub++
	m.subscribers[id] = sub
	take := func() []schema.GroupVersion {
		m.mu.Lock()
		defer m.mu.Unlock()
		out := make([]schema.GroupVersion, 0, len(sub.changed))
		for gv := range sub.changed {
			out = append(out, gv)
		}
		sub.changed = nil
		return out
	}
	return sub.ch, take, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.subscribers, id)
	}
}

// HasLocal reports whether gv is held as served by the chain (added
// without [Remote]), as [Manager.LocalGroupVersions] would list it.
func (m *Manager) HasLocal(gv schema.GroupVersion) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.entries[gv]
	return ok
}

// updateLocked publishes a new snapshot and routes new groups on the heads.
func (m *Manager) updateLocked(coreChanged bool) {
	s := m.build(m.snap.Load(), coreChanged)
	m.snap.Store(s)
	m.routeGroupsLocked(s)
	for _, sub := range m.subscribers {
		select {
		case sub.ch <- struct{}{}:
		default:
		}
	}
}
