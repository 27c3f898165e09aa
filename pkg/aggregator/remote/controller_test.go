package remote

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
)

const wait = 10 * time.Second

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wardleLegacy is wardleResources as a legacy APIResourceList.
func wardleLegacy() *metav1.APIResourceList {
	kind := func(k string) (string, string, string) { return "wardle.example.com", "v1alpha1", k }
	fl := metav1.APIResource{Name: "flunders", SingularName: "flunder", Namespaced: true, Verbs: crud, ShortNames: []string{"fl"}, Categories: []string{"all"}}
	fl.Group, fl.Version, fl.Kind = kind("Flunder")
	st := metav1.APIResource{Name: "flunders/status", Namespaced: true, Verbs: []string{"get", "patch", "update"}}
	st.Group, st.Version, st.Kind = kind("Flunder")
	fi := metav1.APIResource{Name: "fischers", SingularName: "fischer", Verbs: crud}
	fi.Group, fi.Version, fi.Kind = kind("Fischer")
	return &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: "wardle.example.com/v1alpha1",
		APIResources: []metav1.APIResource{fl, st, fi},
	}
}

// TestDiscoveryFromBackend checks that a remote group-version is listed at
// once, then shows the backend's resources, fetched as the users upstream
// uses, from aggregated discovery or the legacy fallback.
func TestDiscoveryFromBackend(t *testing.T) {
	cases := []struct {
		name       string
		setup      func(b *backend)
		wantWho    map[string]string
		wantLegacy bool
	}{
		{
			name: "aggregated",
			setup: func(b *backend) {
				b.aggregated = aggregatedList(
					group("other.example.com", "v1", nil),
					group("wardle.example.com", "v1alpha1", wardleResources()),
				)
			},
			wantWho: map[string]string{
				"/apis":       "system:kube-aggregator/system:masters",
				"/openapi/v2": "system:aggregator/",
				"/openapi/v3": "system:aggregator/",
			},
		},
		{
			name: "legacy fallback",
			setup: func(b *backend) {
				b.legacy["/apis/wardle.example.com/v1alpha1"] = wardleLegacy()
			},
			wantWho: map[string]string{
				"/apis":                             "system:kube-aggregator/system:masters",
				"/apis/wardle.example.com/v1alpha1": "system:aggregator/",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHead(t)
			b := newBackend(t)
			b.set(tc.setup)
			c, err := New(Config{Discovery: h.disco, OpenAPI: h.oa, Targets: newTargets(map[string]*backend{"v1alpha1.wardle.example.com": b}), Resync: time.Hour, Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			local := apiService("apps", "v1", 17800, 15, true)
			local.Spec.Service = nil
			c.Sync([]*apiregistrationv1.APIService{apiService("wardle.example.com", "v1alpha1", 100, 15, true), local})

			// Listed before any fetch, as legacy /apis lists every APIService.
			if got, want := fmt.Sprint(h.legacyGroups(t)), "[wardle.example.com:v1alpha1]"; got != want {
				t.Fatalf("legacy /apis before fetch: got %s, want %s", got, want)
			}
			if code, body := h.get(t, "/apis/wardle.example.com", "application/json"); code != http.StatusOK {
				t.Fatalf("GET /apis/wardle.example.com: got %d, want 200: %s", code, body)
			}
			v := h.version(t, "wardle.example.com", "v1alpha1")
			if v == nil || v.Freshness != apidiscoveryv2.DiscoveryFreshnessStale || len(v.Resources) != 0 {
				t.Fatalf("aggregated before fetch: got %+v, want Stale with no resources", v)
			}

			run(t, c)
			want := jsonOf(t, wardleResources())
			eventually(t, wait, func() string {
				v := h.version(t, "wardle.example.com", "v1alpha1")
				if v == nil || v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
					return fmt.Sprintf("got %+v, want Current", v)
				}
				if got := jsonOf(t, v.Resources); got != want {
					return fmt.Sprintf("resources: got %s, want %s", got, want)
				}
				return ""
			})
			for path, want := range tc.wantWho {
				eventually(t, wait, func() string {
					if got := b.who(path); got != want {
						return fmt.Sprintf("identity at %s: got %q, want %q", path, got, want)
					}
					return ""
				})
			}
			for _, g := range h.aggregated(t).Items {
				if g.Name == "other.example.com" || g.Name == "apps" {
					t.Errorf("aggregated discovery lists %s, which no remote APIService serves", g.Name)
				}
			}
			if got := h.disco.LocalGroupVersions(); len(got) != 0 {
				t.Errorf("local group-versions: got %v, want none (remote ones are marked Remote)", got)
			}
		})
	}
}

// TestStaleWhenBackendStops checks that resources stay, marked Stale, while
// the backend does not answer, and turn Current when it answers again.
func TestStaleWhenBackendStops(t *testing.T) {
	cases := []struct {
		name    string
		stop    func(b *backend)
		restart func(b *backend)
	}{
		{name: "error status", stop: func(b *backend) { b.status = http.StatusServiceUnavailable }, restart: func(b *backend) { b.status = 0 }},
		{name: "hanging", stop: func(b *backend) { b.hang = true }, restart: func(b *backend) { b.hang = false }},
		{name: "not found", stop: func(b *backend) { b.status = http.StatusNotFound }, restart: func(b *backend) { b.status = 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHead(t)
			b := newBackend(t)
			b.set(func(b *backend) {
				b.aggregated = aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources()))
			})
			c, err := New(Config{Discovery: h.disco, Targets: newTargets(map[string]*backend{"v1alpha1.wardle.example.com": b}),
				Resync: 50 * time.Millisecond, Timeout: 300 * time.Millisecond, Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			c.Sync([]*apiregistrationv1.APIService{apiService("wardle.example.com", "v1alpha1", 100, 15, true)})
			run(t, c)
			want := jsonOf(t, wardleResources())
			waitFor := func(fresh apidiscoveryv2.DiscoveryFreshness) {
				t.Helper()
				eventually(t, wait, func() string {
					v := h.version(t, "wardle.example.com", "v1alpha1")
					if v == nil || v.Freshness != fresh || jsonOf(t, v.Resources) != want {
						return fmt.Sprintf("got %+v, want %s with the backend's resources", v, fresh)
					}
					return ""
				})
			}
			waitFor(apidiscoveryv2.DiscoveryFreshnessCurrent)
			b.set(tc.stop)
			waitFor(apidiscoveryv2.DiscoveryFreshnessStale)
			if got, want := fmt.Sprint(h.legacyGroups(t)), "[wardle.example.com:v1alpha1]"; got != want {
				t.Errorf("legacy /apis while stale: got %s, want %s", got, want)
			}
			b.set(tc.restart)
			waitFor(apidiscoveryv2.DiscoveryFreshnessCurrent)
		})
	}
}

// TestUnavailableAPIService checks that an APIService that is not
// Available goes Stale at once, keeping its resources, as upstream's proxy
// refuses it, and is fetched again when Available.
func TestUnavailableAPIService(t *testing.T) {
	h := newHead(t)
	b := newBackend(t)
	b.set(func(b *backend) {
		b.aggregated = aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources()))
	})
	c, err := New(Config{Discovery: h.disco, Targets: newTargets(map[string]*backend{"v1alpha1.wardle.example.com": b}), Resync: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	want := jsonOf(t, wardleResources())
	check := func(fresh apidiscoveryv2.DiscoveryFreshness) string {
		v := h.version(t, "wardle.example.com", "v1alpha1")
		if v == nil || v.Freshness != fresh || jsonOf(t, v.Resources) != want {
			return fmt.Sprintf("got %+v, want %s with the backend's resources", v, fresh)
		}
		return ""
	}
	c.Sync([]*apiregistrationv1.APIService{apiService("wardle.example.com", "v1alpha1", 100, 15, true)})
	eventually(t, wait, func() string { return check(apidiscoveryv2.DiscoveryFreshnessCurrent) })

	c.Sync([]*apiregistrationv1.APIService{apiService("wardle.example.com", "v1alpha1", 100, 15, false)})
	if msg := check(apidiscoveryv2.DiscoveryFreshnessStale); msg != "" {
		t.Fatalf("right after Sync with Available=False: %s", msg)
	}
	before := b.count("/apis")
	c.Sync([]*apiregistrationv1.APIService{apiService("wardle.example.com", "v1alpha1", 100, 15, true)})
	eventually(t, wait, func() string {
		if b.count("/apis") == before {
			return "no fetch after the APIService became Available"
		}
		return check(apidiscoveryv2.DiscoveryFreshnessCurrent)
	})
}

// TestPriorityOrder checks remote group-versions ordered among local ones
// by groupPriorityMinimum and versionPriority, in both /apis documents.
func TestPriorityOrder(t *testing.T) {
	h := newHead(t)
	for _, gv := range []schema.GroupVersion{{Group: "apps", Version: "v1"}, {Group: "stable.example.com", Version: "v1"}} {
		opts := []discovery.Option{}
		if gv.Group == "stable.example.com" {
			opts = append(opts, discovery.WithPriority(discovery.CRDPriority))
		}
		if err := h.disco.AddGroupVersion(gv, nil, opts...); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(Config{Discovery: h.disco, Targets: newTargets(nil), Resync: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	c.Sync([]*apiregistrationv1.APIService{
		apiService("low.example.com", "v1", 100, 15, true),
		apiService("mid.example.com", "v1", 17000, 10, true),
		apiService("high.example.com", "v1", 20000, 15, true),
		apiService("mid.example.com", "v2", 17000, 20, false),
	})
	if got, want := fmt.Sprint(h.legacyGroups(t)), "[high.example.com:v1 apps:v1 mid.example.com:v2,v1 stable.example.com:v1 low.example.com:v1]"; got != want {
		t.Errorf("legacy /apis: got %s, want %s", got, want)
	}
	var got []string
	for _, g := range h.aggregated(t).Items {
		vs := ""
		for _, v := range g.Versions {
			vs += v.Version + "(" + string(v.Freshness) + ")"
		}
		got = append(got, g.Name+":"+vs)
	}
	want := "[high.example.com:v1(Stale) apps:v1(Current) mid.example.com:v2(Stale)v1(Stale) stable.example.com:v1(Current) low.example.com:v1(Stale)]"
	if fmt.Sprint(got) != want {
		t.Errorf("aggregated /apis: got %s, want %s", got, want)
	}

	// A changed priority moves the group at once.
	c.Sync([]*apiregistrationv1.APIService{
		apiService("low.example.com", "v1", 20001, 15, true),
		apiService("mid.example.com", "v1", 17000, 10, true),
		apiService("high.example.com", "v1", 20000, 15, true),
		apiService("mid.example.com", "v2", 17000, 20, false),
	})
	if got, want := h.legacyGroups(t)[0], "low.example.com:v1"; got != want {
		t.Errorf("first legacy group after raising its priority: got %s, want %s", got, want)
	}
}

// TestRemoval checks that a removed APIService leaves discovery at once,
// even while its backend is being fetched, and that the others stay.
func TestRemoval(t *testing.T) {
	h := newHead(t)
	good, hanging := newBackend(t), newBackend(t)
	good.set(func(b *backend) {
		b.aggregated = aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources()))
	})
	hanging.set(func(b *backend) { b.hang = true })
	c, err := New(Config{Discovery: h.disco, Targets: newTargets(map[string]*backend{
		"v1alpha1.wardle.example.com": good,
		"v1.hang.example.com":         hanging,
	}), Resync: time.Hour, Timeout: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	wardle := apiService("wardle.example.com", "v1alpha1", 100, 15, true)
	hang := apiService("hang.example.com", "v1", 100, 15, true)
	c.Sync([]*apiregistrationv1.APIService{wardle, hang})
	eventually(t, wait, func() string {
		if v := h.version(t, "wardle.example.com", "v1alpha1"); v == nil || v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
			return fmt.Sprintf("wardle: got %+v, want Current", v)
		}
		if hanging.count("/apis") == 0 {
			return "hanging backend not asked yet"
		}
		return ""
	})

	c.Sync([]*apiregistrationv1.APIService{wardle})
	if got, want := fmt.Sprint(h.legacyGroups(t)), "[wardle.example.com:v1alpha1]"; got != want {
		t.Errorf("legacy /apis after removing the hanging one: got %s, want %s", got, want)
	}
	// Added again while its worker still waits on the backend: listed at
	// once, and removed at once again.
	c.Sync([]*apiregistrationv1.APIService{wardle, hang})
	if got, want := fmt.Sprint(h.legacyGroups(t)), "[hang.example.com:v1 wardle.example.com:v1alpha1]"; got != want {
		t.Errorf("legacy /apis after adding the hanging one again: got %s, want %s", got, want)
	}
	if v := h.version(t, "hang.example.com", "v1"); v == nil || v.Freshness != apidiscoveryv2.DiscoveryFreshnessStale {
		t.Errorf("hanging one added again: got %+v, want Stale", v)
	}
	c.Sync(nil)
	if got := h.legacyGroups(t); len(got) != 0 {
		t.Errorf("legacy /apis after removing all: got %v, want none", got)
	}
	if got := h.aggregated(t).Items; len(got) != 0 {
		t.Errorf("aggregated /apis after removing all: got %v, want none", got)
	}
	if code, _ := h.get(t, "/apis/wardle.example.com", "application/json"); code != http.StatusNotFound {
		t.Errorf("GET /apis/wardle.example.com after removal: got %d, want 404", code)
	}
}

// TestHangingBackend checks that a backend that never answers delays no
// other: with one worker thanks to the timeout, with two because it holds
// only one.
func TestHangingBackend(t *testing.T) {
	cases := []struct {
		name    string
		workers int
		timeout time.Duration
	}{
		{name: "one worker, short timeout", workers: 1, timeout: 300 * time.Millisecond},
		{name: "two workers, no useful timeout", workers: 2, timeout: time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHead(t)
			good, hanging := newBackend(t), newBackend(t)
			good.set(func(b *backend) {
				b.aggregated = aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources()))
			})
			hanging.set(func(b *backend) { b.hang = true })
			c, err := New(Config{Discovery: h.disco, Targets: newTargets(map[string]*backend{
				"v1alpha1.wardle.example.com": good,
				"v1.hang.example.com":         hanging,
			}), Resync: time.Hour, Timeout: tc.timeout, Workers: tc.workers, Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			// The hanging one is queued first.
			c.Sync([]*apiregistrationv1.APIService{
				apiService("hang.example.com", "v1", 100, 15, true),
				apiService("wardle.example.com", "v1alpha1", 100, 15, true),
			})
			run(t, c)
			eventually(t, wait, func() string {
				if v := h.version(t, "wardle.example.com", "v1alpha1"); v == nil || v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
					return fmt.Sprintf("wardle: got %+v, want Current", v)
				}
				return ""
			})
			// Queued first, but with two workers the other one may finish
			// before this request reaches the hanging backend.
			eventually(t, wait, func() string {
				if hanging.count("/apis") == 0 {
					return "the hanging backend was never asked"
				}
				return ""
			})
			if v := h.version(t, "hang.example.com", "v1"); v == nil || v.Freshness != apidiscoveryv2.DiscoveryFreshnessStale {
				t.Errorf("hanging: got %+v, want Stale", v)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	h := newHead(t)
	cases := []struct {
		name string
		cfg  Config
	}{
		{name: "no discovery", cfg: Config{Targets: newTargets(nil)}},
		{name: "no targets", cfg: Config{Discovery: h.disco}},
		{name: "negative timeout", cfg: Config{Discovery: h.disco, Targets: newTargets(nil), Timeout: -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil {
				t.Errorf("got no error, want one")
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	cases := []struct {
		n     int
		limit time.Duration
		want  time.Duration
	}{
		{1, time.Minute, time.Second},
		{2, time.Minute, 2 * time.Second},
		{4, time.Minute, 8 * time.Second},
		{30, time.Minute, time.Minute},
		{1, 50 * time.Millisecond, 50 * time.Millisecond},
	}
	for _, tc := range cases {
		if got := backoff(tc.n, tc.limit); got != tc.want {
			t.Errorf("backoff(%d, %v): got %v, want %v", tc.n, tc.limit, got, tc.want)
		}
	}
}
