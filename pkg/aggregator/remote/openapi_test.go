package remote

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

const (
	wardleV3Path  = "apis/wardle.example.com/v1alpha1"
	localPath     = "/api/v1/pods"
	listMetaName  = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
	ourListMeta   = `{"description":"ours"}`
	flunderPrefix = "com.example.wardle.v1alpha1."
)

// newOpenAPIHead is a head whose chain already serves a path and
// Kubernetes' ListMeta.
func newOpenAPIHead(t *testing.T) *head {
	h := newHead(t)
	h.oa.MergeV2(map[string]any{localPath: map[string]any{"get": map[string]any{}}},
		map[string]any{listMetaName: map[string]any{"description": "ours"}})
	h.oa.SetV3("api/v1", []byte(`{"openapi":"3.0.0"}`))
	return h
}

// TestOpenAPIMergedAndRemoved checks the backend's v2 paths of its
// group-version and the definitions they need merged (the chain's own
// definition kept), its v3 document served, and all of it removed with
// the APIService.
func TestOpenAPIMergedAndRemoved(t *testing.T) {
	h := newOpenAPIHead(t)
	b := newBackend(t)
	b.set(func(b *backend) {
		b.aggregated = aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources()))
		b.v2 = wardleV2("first")
		b.v2ETag = true
		b.v3 = map[string]any{wardleV3Path: wardleV3("first"), "apis/other.example.com/v1": wardleV3("other")}
	})
	c, err := New(Config{Discovery: h.disco, OpenAPI: h.oa, Targets: newTargets(map[string]*backend{"v1alpha1.wardle.example.com": b}), Resync: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	c.Sync([]*apiregistrationv1.APIService{apiService("wardle.example.com", "v1alpha1", 100, 15, true)})

	wantPaths := fmt.Sprint([]string{localPath, "/apis/wardle.example.com/v1alpha1/", "/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders"})
	wantDefs := fmt.Sprint([]string{flunderPrefix + "Flunder", flunderPrefix + "FlunderList", flunderPrefix + "FlunderSpec", listMetaName})
	eventually(t, wait, func() string {
		paths, defs, _ := h.v2(t)
		if fmt.Sprint(paths) != wantPaths || fmt.Sprint(defs) != wantDefs {
			return fmt.Sprintf("v2: got paths %v definitions %v, want %s and %s", paths, defs, wantPaths, wantDefs)
		}
		return ""
	})
	_, _, definitions := h.v2(t)
	if got := string(definitions[listMetaName]); got != ourListMeta {
		t.Errorf("%s: got %s, want the chain's own %s", listMetaName, got, ourListMeta)
	}
	if got := string(definitions[flunderPrefix+"Flunder"]); !strings.Contains(got, `"maximum":9223372036854775807`) {
		t.Errorf("Flunder: got %s, want the exact maximum 9223372036854775807", got)
	}

	eventually(t, wait, func() string {
		code, body := h.get(t, "/openapi/v3/"+wardleV3Path, "application/json")
		if code != http.StatusOK {
			return fmt.Sprintf("GET /openapi/v3/%s: got %d, want 200", wardleV3Path, code)
		}
		if got, want := string(body), jsonOf(t, wardleV3("first")); got != want {
			return fmt.Sprintf("v3 document: got %s, want %s", got, want)
		}
		return ""
	})
	if got, want := fmt.Sprint(h.oa.V3Paths()), "[api/v1 "+wardleV3Path+"]"; got != want {
		t.Errorf("v3 paths: got %s, want %s (only the APIService's group-version)", got, want)
	}

	c.Sync(nil)
	paths, defs, definitions := h.v2(t)
	if got, want := fmt.Sprint(paths), "["+localPath+"]"; got != want {
		t.Errorf("v2 paths after removal: got %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(defs), "["+listMetaName+"]"; got != want {
		t.Errorf("v2 definitions after removal: got %s, want %s", got, want)
	}
	if got := string(definitions[listMetaName]); got != ourListMeta {
		t.Errorf("%s after removal: got %s, want %s", listMetaName, got, ourListMeta)
	}
	if got, want := fmt.Sprint(h.oa.V3Paths()), "[api/v1]"; got != want {
		t.Errorf("v3 paths after removal: got %s, want %s", got, want)
	}
}

// TestSharedDefinitions checks that a definition two APIServices reference
// stays until the last of them goes.
func TestSharedDefinitions(t *testing.T) {
	h := newOpenAPIHead(t)
	b := newBackend(t)
	ref := map[string]any{"$ref": "#/definitions/com.example.wardle.Shared"}
	b.set(func(b *backend) {
		b.aggregated = aggregatedList()
		b.v2 = map[string]any{
			"paths": map[string]any{
				"/apis/wardle.example.com/v1alpha1/a": map[string]any{"get": map[string]any{"schema": ref}},
				"/apis/wardle.example.com/v1beta1/b":  map[string]any{"get": map[string]any{"schema": ref}},
			},
			"definitions": map[string]any{"com.example.wardle.Shared": map[string]any{"type": "object"}},
		}
	})
	c, err := New(Config{Discovery: h.disco, OpenAPI: h.oa, Targets: newTargets(map[string]*backend{
		"v1alpha1.wardle.example.com": b,
		"v1beta1.wardle.example.com":  b,
	}), Resync: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	alpha := apiService("wardle.example.com", "v1alpha1", 100, 15, true)
	beta := apiService("wardle.example.com", "v1beta1", 100, 10, true)
	c.Sync([]*apiregistrationv1.APIService{alpha, beta})
	eventually(t, wait, func() string {
		paths, defs, _ := h.v2(t)
		if len(paths) != 3 || fmt.Sprint(defs) != "[com.example.wardle.Shared "+listMetaName+"]" {
			return fmt.Sprintf("got paths %v definitions %v, want both paths and the shared definition", paths, defs)
		}
		return ""
	})
	// A removed APIService's OpenAPI goes when the worker fetching it
	// (if any: the v3 document may still be in flight) is done.
	c.Sync([]*apiregistrationv1.APIService{beta})
	eventually(t, wait, func() string {
		if paths, defs, _ := h.v2(t); fmt.Sprint(paths) != "["+localPath+" /apis/wardle.example.com/v1beta1/b]" || len(defs) != 2 {
			return fmt.Sprintf("after removing one: got paths %v definitions %v, want v1beta1's path and the shared definition", paths, defs)
		}
		return ""
	})
	c.Sync(nil)
	eventually(t, wait, func() string {
		if _, defs, _ := h.v2(t); fmt.Sprint(defs) != "["+listMetaName+"]" {
			return fmt.Sprintf("after removing both: got definitions %v, want only the chain's own", defs)
		}
		return ""
	})
}

// TestRefresh checks that periodic refreshes pick up the backend's
// changes, using ETags where the backend sends them.
func TestRefresh(t *testing.T) {
	for _, v2ETag := range []bool{true, false} {
		t.Run(fmt.Sprintf("v2 ETag %v", v2ETag), func(t *testing.T) {
			h := newOpenAPIHead(t)
			b := newBackend(t)
			b.set(func(b *backend) {
				b.aggregated = aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources()))
				b.v2 = wardleV2("first")
				b.v2ETag = v2ETag
				b.v3 = map[string]any{wardleV3Path: wardleV3("first")}
			})
			c, err := New(Config{Discovery: h.disco, OpenAPI: h.oa, Targets: newTargets(map[string]*backend{"v1alpha1.wardle.example.com": b}), Resync: 50 * time.Millisecond, Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			c.Sync([]*apiregistrationv1.APIService{apiService("wardle.example.com", "v1alpha1", 100, 15, true)})
			run(t, c)
			state := func(resources []apidiscoveryv2.APIResourceDiscovery, desc string) string {
				v := h.version(t, "wardle.example.com", "v1alpha1")
				if v == nil || jsonOf(t, v.Resources) != jsonOf(t, resources) {
					return fmt.Sprintf("discovery: got %+v, want %d resources", v, len(resources))
				}
				_, _, defs := h.v2(t)
				if got := string(defs[flunderPrefix+"Flunder"]); !strings.Contains(got, `"description":"`+desc+`"`) {
					return fmt.Sprintf("v2 Flunder: got %s, want description %q", got, desc)
				}
				if _, body := h.get(t, "/openapi/v3/"+wardleV3Path, ""); string(body) != jsonOf(t, wardleV3(desc)) {
					return fmt.Sprintf("v3: got %s, want title %q", body, desc)
				}
				return ""
			}
			eventually(t, wait, func() string { return state(wardleResources(), "first") })
			// Refreshed with If-None-Match: the unchanged documents answer 304.
			eventually(t, wait, func() string {
				if n := b.notModified("/apis"); n < 2 {
					return fmt.Sprintf("/apis answered 304 %d times, want at least 2", n)
				}
				if n := b.notModified("/openapi/v3"); n < 2 {
					return fmt.Sprintf("/openapi/v3 answered 304 %d times, want at least 2", n)
				}
				if n := b.notModified("/openapi/v2"); v2ETag && n < 2 {
					return fmt.Sprintf("/openapi/v2 answered 304 %d times, want at least 2", n)
				}
				return ""
			})

			b.set(func(b *backend) {
				b.aggregated = aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources("extras")))
				b.v2 = wardleV2("second")
				b.v3 = map[string]any{wardleV3Path: wardleV3("second")}
			})
			eventually(t, wait, func() string { return state(wardleResources("extras"), "second") })
			// The v3 document is fetched again only when its hash changed,
			// not when the index changed for another group-version.
			fullIndex := func() int { return b.count("/openapi/v3") - b.notModified("/openapi/v3") }
			before := fullIndex()
			b.set(func(b *backend) { b.v3["apis/other.example.com/v1"] = wardleV3("other") })
			eventually(t, wait, func() string {
				if fullIndex() < before+1 {
					return "changed index not fetched"
				}
				return ""
			})
			if got := b.count("/openapi/v3/" + wardleV3Path); got != 2 {
				t.Errorf("v3 document fetched %d times, want 2 (once per hash)", got)
			}
		})
	}
}

// TestChainDefinitionOutsideK8sPrefixKept: a definition the chain itself
// defines under a name outside Kubernetes' prefixes (a CRD's, say) is
// neither replaced by a backend's definition of the same name nor
// removed with the APIService.
func TestChainDefinitionOutsideK8sPrefixKept(t *testing.T) {
	h := newOpenAPIHead(t)
	const chainSpec = `{"description":"the chain's own FlunderSpec"}`
	h.oa.MergeV2(nil, map[string]any{flunderPrefix + "FlunderSpec": map[string]any{"description": "the chain's own FlunderSpec"}})
	b := newBackend(t)
	b.set(func(b *backend) {
		b.aggregated = aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources()))
		b.v2 = wardleV2("first")
	})
	c, err := New(Config{Discovery: h.disco, OpenAPI: h.oa, Targets: newTargets(map[string]*backend{"v1alpha1.wardle.example.com": b}), Resync: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	c.Sync([]*apiregistrationv1.APIService{apiService("wardle.example.com", "v1alpha1", 100, 15, true)})
	eventually(t, wait, func() string {
		_, defs, _ := h.v2(t)
		if !strings.Contains(fmt.Sprint(defs), flunderPrefix+"Flunder ") {
			return fmt.Sprintf("v2 definitions %v: the backend's Flunder is not merged yet", defs)
		}
		return ""
	})
	_, _, definitions := h.v2(t)
	if got := string(definitions[flunderPrefix+"FlunderSpec"]); got != chainSpec {
		t.Errorf("FlunderSpec with the backend merged: got %s, want the chain's %s", got, chainSpec)
	}
	c.Sync(nil)
	_, _, definitions = h.v2(t)
	if got := string(definitions[flunderPrefix+"FlunderSpec"]); got != chainSpec {
		t.Errorf("FlunderSpec after the APIService went: got %s, want the chain's %s", got, chainSpec)
	}
	if _, ok := definitions[flunderPrefix+"Flunder"]; ok {
		t.Error("the backend's Flunder is still defined after the APIService went")
	}
}
