package discovery

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// requestLog records the paths and Accept headers a client sent.
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.URL.Path+" "+r.Header.Get("Accept"))
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *requestLog) paths() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.seen {
		p, _, _ := strings.Cut(s, " ")
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func TestClientGoDiscovery(t *testing.T) {
	wantGroups := []string{"", "apiregistration.k8s.io", "apps", "events.k8s.io", "apiextensions.k8s.io", "coordination.k8s.io", "stable.example.com", "zoo.example.com"}
	cases := []struct {
		name         string
		cfg          Config
		clientLegacy bool
		wantLists    bool // the client fetched per-group-version lists
	}{
		{name: "aggregated"},
		{name: "client asks legacy", clientLegacy: true, wantLists: true},
		{name: "server legacy only", cfg: Config{DisableAggregated: true}, wantLists: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newChain(t, tc.cfg, allFixtures()...)
			var log requestLog
			srv := httptest.NewServer(log.wrap(c.head.Handler()))
			t.Cleanup(srv.Close)
			dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			dc.UseLegacyDiscovery = tc.clientLegacy

			groups, lists, err := dc.ServerGroupsAndResources()
			if err != nil {
				t.Fatalf("ServerGroupsAndResources: %v", err)
			}
			var gotGroups []string
			for _, g := range groups {
				gotGroups = append(gotGroups, g.Name)
			}
			if strings.Join(gotGroups, ",") != strings.Join(wantGroups, ",") {
				t.Errorf("got groups %q, want %q", gotGroups, wantGroups)
			}
			for _, g := range groups {
				if g.Name == "stable.example.com" && (g.PreferredVersion.Version != "v1" || len(g.Versions) != 2) {
					t.Errorf("stable.example.com: got preferred %q and %d versions, want v1 of 2", g.PreferredVersion.Version, len(g.Versions))
				}
			}

			byGV := map[string]*metav1.APIResourceList{}
			for _, l := range lists {
				byGV[l.GroupVersion] = l
			}
			for _, f := range allFixtures() {
				l, ok := byGV[f.gv.String()]
				if !ok {
					t.Errorf("no resources for %s", f.gv)
					continue
				}
				var got, want []string
				for _, r := range l.APIResources {
					got = append(got, r.Name)
				}
				for _, r := range f.resources {
					want = append(want, r.Name)
				}
				sort.Strings(got)
				sort.Strings(want)
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("%s: got resources %v, want %v", f.gv, got, want)
				}
			}
			if l := byGV["apps/v1"]; l != nil {
				for _, r := range l.APIResources {
					switch r.Name {
					case "deployments/scale":
						if r.Group != "autoscaling" || r.Version != "v1" || r.Kind != "Scale" || !r.Namespaced {
							t.Errorf("deployments/scale: got %s/%s %s namespaced=%v, want autoscaling/v1 Scale namespaced", r.Group, r.Version, r.Kind, r.Namespaced)
						}
					case "deployments":
						if r.SingularName != "deployment" || strings.Join(r.ShortNames, ",") != "deploy" || strings.Join(r.Categories, ",") != "all" {
							t.Errorf("deployments: got %+v", r)
						}
					}
				}
			}

			fetchedLists := false
			for _, p := range log.paths() {
				if strings.Count(p, "/") >= 2 && p != "/apis/" {
					fetchedLists = true
				}
			}
			if fetchedLists != tc.wantLists {
				t.Errorf("client fetched per-group-version lists: got %v, want %v (requests %v)", fetchedLists, tc.wantLists, log.paths())
			}

			preferred, err := dc.ServerPreferredResources()
			if err != nil {
				t.Fatalf("ServerPreferredResources: %v", err)
			}
			var crontabVersions []string
			for _, l := range preferred {
				for _, r := range l.APIResources {
					if r.Name == "crontabs" {
						crontabVersions = append(crontabVersions, l.GroupVersion)
					}
				}
			}
			if strings.Join(crontabVersions, ",") != "stable.example.com/v1" {
				t.Errorf("preferred crontabs: got %v, want [stable.example.com/v1]", crontabVersions)
			}
		})
	}
}
