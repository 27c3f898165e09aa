package discovery

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func httpGet(t *testing.T, url, accept string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp, body(t, resp)
}

// TestChainRouting checks that discovery installed on the head leaves every
// other path to the servers behind it, and that unknown versions of a group
// end as upstream's do: a 404 Status in the server that owns a built-in
// group, the plain not-found of the chain's end for CRD and unknown groups.
func TestChainRouting(t *testing.T) {
	c := newChain(t, Config{}, allFixtures()...)
	const statusNotFound = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}` + "\n"
	const plainNotFound = "404 page not found\n"
	cases := []struct {
		path     string
		wantCode int
		wantKind string // of a JSON body
		wantBody string // exact, when set
	}{
		{path: "/api", wantCode: 200, wantKind: "APIGroupDiscoveryList"},
		{path: "/api/", wantCode: 200, wantKind: "APIGroupDiscoveryList"},
		{path: "/api/v1", wantCode: 200, wantKind: "APIResourceList"},
		{path: "/api/v2", wantCode: 404, wantBody: statusNotFound},
		{path: "/apis", wantCode: 200, wantKind: "APIGroupDiscoveryList"},
		{path: "/apis/", wantCode: 200, wantKind: "APIGroupList"}, // legacy only, as upstream
		{path: "/apis/apps", wantCode: 200, wantKind: "APIGroup"},
		{path: "/apis/apps/", wantCode: 200, wantKind: "APIGroup"},
		{path: "/apis/apps/v1", wantCode: 200, wantKind: "APIResourceList"},
		{path: "/apis/apps/v999", wantCode: 404, wantBody: statusNotFound},
		{path: "/apis/apiextensions.k8s.io/v1", wantCode: 200, wantKind: "APIResourceList"},
		{path: "/apis/stable.example.com", wantCode: 200, wantKind: "APIGroup"},
		{path: "/apis/stable.example.com/v1beta1", wantCode: 200, wantKind: "APIResourceList"},
		{path: "/apis/stable.example.com/v999", wantCode: 404, wantBody: plainNotFound},
		{path: "/apis/nope.example.com", wantCode: 404, wantBody: plainNotFound},
		{path: "/apis/nope.example.com/v1", wantCode: 404, wantBody: plainNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			resp, b := httpGet(t, c.srv.URL+tc.path, acceptClientGo)
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("got status %d, want %d: %s", resp.StatusCode, tc.wantCode, b)
			}
			if tc.wantBody != "" && string(b) != tc.wantBody {
				t.Errorf("got body %q, want %q", b, tc.wantBody)
			}
			if tc.wantKind != "" {
				var tm metav1.TypeMeta
				if err := json.Unmarshal(b, &tm); err != nil {
					t.Fatal(err)
				}
				if tm.Kind != tc.wantKind {
					t.Errorf("got kind %q, want %q", tm.Kind, tc.wantKind)
				}
			}
		})
	}
}

func TestIndexListsDiscoveryPaths(t *testing.T) {
	c := newChain(t, Config{}, allFixtures()...)
	_, b := httpGet(t, c.srv.URL+"/", "")
	var root metav1.RootPaths
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, p := range root.Paths {
		have[p] = true
	}
	for _, want := range []string{"/api", "/apis", "/apis/apps", "/apis/stable.example.com"} {
		if !have[want] {
			t.Errorf("index lacks %q: %v", want, root.Paths)
		}
	}
}

// TestAddRemoveRoutes checks that groups added and removed after Install
// are routed and unrouted on the head.
func TestAddRemoveRoutes(t *testing.T) {
	c := newChain(t, Config{}, coreV1(), appsV1())
	zoo := zooWidgets()
	groupsOf := func() []string {
		_, b := httpGet(t, c.srv.URL+"/apis", "application/json")
		var l metav1.APIGroupList
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range l.Groups {
			names = append(names, g.Name)
		}
		return names
	}
	steps := []struct {
		name       string
		change     func() error
		wantGroups string
		wantCode   int // of /apis/zoo.example.com
	}{
		{name: "before", change: func() error { return nil }, wantGroups: "apps", wantCode: 404},
		{name: "add", change: func() error { return c.m.AddGroupVersion(zoo.gv, zoo.resources, zoo.opts...) }, wantGroups: "apps,zoo.example.com", wantCode: 200},
		{name: "add again", change: func() error { return c.m.AddGroupVersion(zoo.gv, zoo.resources, zoo.opts...) }, wantGroups: "apps,zoo.example.com", wantCode: 200},
		{name: "remove", change: func() error { c.m.RemoveGroupVersion(zoo.gv); return nil }, wantGroups: "apps", wantCode: 404},
		{name: "remove again", change: func() error { c.m.RemoveGroupVersion(zoo.gv); return nil }, wantGroups: "apps", wantCode: 404},
		{name: "re-add", change: func() error { return c.m.AddGroupVersion(zoo.gv, zoo.resources, zoo.opts...) }, wantGroups: "apps,zoo.example.com", wantCode: 200},
	}
	for _, st := range steps {
		if err := st.change(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := strings.Join(groupsOf(), ","); got != st.wantGroups {
			t.Errorf("%s: got groups %q, want %q", st.name, got, st.wantGroups)
		}
		for _, p := range []string{"/apis/zoo.example.com", "/apis/zoo.example.com/"} {
			if resp, _ := httpGet(t, c.srv.URL+p, ""); resp.StatusCode != st.wantCode {
				t.Errorf("%s: %s got status %d, want %d", st.name, p, resp.StatusCode, st.wantCode)
			}
		}
	}
}

// TestConcurrentAddRead adds and removes group-versions while reading every
// document; run with -race.
func TestConcurrentAddRead(t *testing.T) {
	c := newChain(t, Config{}, coreV1(), appsV1())
	h := c.head.Handler()
	const writers, readers, rounds = 2, 4, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				f := crontabs(fmt.Sprintf("v%d", i%3+1))
				f.gv.Group = fmt.Sprintf("w%d.example.com", w)
				if err := c.m.AddGroupVersion(f.gv, f.resources, f.opts...); err != nil {
					t.Error(err)
					return
				}
				if i%2 == 1 {
					c.m.RemoveGroupVersion(f.gv)
				}
			}
		}()
	}
	paths := []struct{ path, accept string }{
		{"/apis", acceptClientGo}, {"/apis", acceptAggregatedPB}, {"/apis", "application/json"},
		{"/api", acceptClientGo}, {"/api", "application/yaml"}, {"/apis/apps", "application/json"},
		{"/apis/w0.example.com", "application/json"}, {"/apis/w1.example.com", "application/json"},
	}
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				p := paths[(i+r)%len(paths)]
				req, _ := http.NewRequest(http.MethodGet, p.path, nil)
				req.Header.Set("Accept", p.accept)
				rec := newRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK && rec.Code != http.StatusNotFound {
					t.Errorf("%s: got status %d", p.path, rec.Code)
				}
			}
		}()
	}
	wg.Wait()
	// Each writer ended on an add of its group.
	for w := 0; w < writers; w++ {
		g := fmt.Sprintf("w%d.example.com", w)
		if resp, _ := httpGet(t, c.srv.URL+"/apis/"+g, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("/apis/%s: got status %d, want 200", g, resp.StatusCode)
		}
	}
}
