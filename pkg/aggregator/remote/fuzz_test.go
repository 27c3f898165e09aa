package remote

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
)

// FuzzDecode feeds arbitrary backend responses to every decoder of fetched
// documents and the discovery manager: nothing may panic, and what is
// accepted must be usable.
//
// Run it with a short -fuzzminimizetime (2s–5s): under the default 60 s
// the engine spends nearly all its time minimizing the many new inputs it
// finds (15 execs in 90 s in session 22's campaign, 26,261 in 60 s with
// 2 s; golang/go#51484).
func FuzzDecode(f *testing.F) {
	seed := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	seed(aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources("extras"))))
	seed(wardleLegacy())
	seed(wardleV2("seed"))
	seed(wardleV3("seed"))
	seed(map[string]any{"paths": map[string]any{wardleV3Path: map[string]string{"serverRelativeURL": "/openapi/v3/" + wardleV3Path + "?hash=AB"}}})
	f.Add([]byte(`{"kind":"APIGroupDiscoveryList","items":[{"metadata":{"name":"wardle.example.com"},"versions":[{"version":"v1alpha1","resources":[{"resource":"a","scope":"Cluster","subresources":[{"subresource":"s"}]},{"resource":"a/b"}]}]}]}`))
	f.Add([]byte(`{"kind":"APIResourceList","groupVersion":"wardle.example.com/v1alpha1","resources":[{"name":"x/y","namespaced":true},{"name":"x"},{"name":"/"}]}`))
	f.Add([]byte(`{"paths":{"/apis/wardle.example.com/v1alpha1":{"$ref":"#/definitions/a~1b"}},"definitions":{"a/b":{"$ref":"#/definitions/a/b"}}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[[[[[[[[[[]]]]]]]]]]`))

	gv := schema.GroupVersion{Group: "wardle.example.com", Version: "v1alpha1"}
	f.Fuzz(func(t *testing.T, body []byte) {
		// A manager per input: with one shared across inputs, what an
		// input does (first add or replace) depended on the inputs run
		// before it, so a crasher might not replay alone from testdata.
		m, err := discovery.New(discovery.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, decode := range []func([]byte, schema.GroupVersion) ([]metav1.APIResource, error){decodeAggregated, decodeLegacy} {
			resources, err := decode(body, gv)
			if err != nil {
				continue
			}
			// The manager may reject them (it is told apart from a
			// fetch failure), but must not panic.
			_ = m.AddGroupVersion(gv, resources, discovery.Remote())
		}
		if part, err := selectV2(body, "/apis/wardle.example.com/v1alpha1"); err == nil {
			if _, err := json.Marshal(map[string]any{"paths": part.paths, "definitions": part.defs, "parameters": part.params}); err != nil {
				t.Errorf("selected v2 parts do not encode: %v", err)
			}
		}
		_, _ = decodeV3Index(body, wardleV3Path)
		_ = checkV3Document(body)
		_ = isAggregated(string(body))
	})
}
