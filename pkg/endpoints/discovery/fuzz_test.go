package discovery

import (
	"net/http"
	"testing"
)

// FuzzAccept feeds arbitrary Accept headers to every discovery path: never a
// panic, always 200 in a served media type, 304 or a 406 Status.
func FuzzAccept(f *testing.F) {
	for _, seed := range []string{
		"", "*/*", "application/json", acceptClientGo, acceptClientGoPeer, acceptKubectl127,
		acceptAggregatedPB, acceptV2Beta1Only, "application/json;q=0.5,application/yaml",
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "application/",
		"*/", "a/b/c", ";;;", "application/json;q=x", "application/json;pretty=1;stream=watch",
		"application/json;as=;g=;v=", ",,,", "application/json;a=b=c",
	} {
		f.Add(seed)
	}
	m := newManager(f, Config{ServeV2Beta1: true}, allFixtures()...)
	h := m.Handler()
	served := map[string]bool{}
	for _, mt := range mediaTypes {
		served[mt.String()] = true
		for _, v := range []string{"v2", "v2beta1"} {
			served[mt.String()+";g=apidiscovery.k8s.io;v="+v+";as=APIGroupDiscoveryList"] = true
		}
	}
	f.Fuzz(func(t *testing.T, accept string) {
		for _, path := range []string{"/api", "/apis", "/apis/apps"} {
			r, err := http.NewRequest(http.MethodGet, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Header["Accept"] = []string{accept}
			rec := newRecorder()
			h.ServeHTTP(rec, r)
			switch rec.Code {
			case http.StatusOK:
				if ct := rec.Header().Get("Content-Type"); !served[ct] {
					t.Fatalf("%s with Accept %q: got Content-Type %q", path, accept, ct)
				}
			case http.StatusNotAcceptable:
				if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
					t.Fatalf("%s with Accept %q: 406 with Content-Type %q", path, accept, ct)
				}
			default:
				t.Fatalf("%s with Accept %q: got status %d", path, accept, rec.Code)
			}
		}
	})
}

func TestParseAccept(t *testing.T) {
	cases := []struct {
		header string
		want   []string // type/subtype in preference order
	}{
		{header: "application/json", want: []string{"application/json"}},
		{header: "a/b;q=0.1, c/d", want: []string{"c/d", "a/b"}},
		{header: "*/*, a/*, a/b", want: []string{"a/b", "a/*", "*/*"}},
		{header: "*", want: []string{"*/*"}},
		{header: "bad, a/b/c, a/, x/y", want: []string{"x/y"}},
		{header: "a/b;q=nope, c/d;q=0.5", want: []string{"c/d", "a/b"}},
	}
	for _, tc := range cases {
		t.Run(tc.header, func(t *testing.T) {
			var got []string
			for _, c := range parseAccept(tc.header) {
				got = append(got, c.typ+"/"+c.subType)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}
