package remote

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/openapi/openapitest"
)

var wardleGV = schema.GroupVersion{Group: "wardle.example.com", Version: "v1alpha1"}

// wardleDocuments are the /openapi/v2 and /openapi/v3 document of
// wardle.example.com/v1alpha1 shaped as k8s.io/sample-apiserver serves
// them: every operation of flunders (namespaced) and fischers
// (cluster-scoped); in v2, most parameters shared under "parameters" and
// referenced as "#/parameters/<name>-<hash>", as kube-openapi's builder
// does (dryRun and fieldValidation inline, as upstream's swagger.json has
// them).
func wardleDocuments(t *testing.T) (v2, v3 map[string]any) {
	t.Helper()
	all := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	resources := []openapi.Resource{
		{Name: "fischers", Kind: wardleGV.WithKind("Fischer"), Verbs: all},
		{Name: "flunders", Namespaced: true, Kind: wardleGV.WithKind("Flunder"), Verbs: all},
	}
	defs := openapi.Default()
	paths, err := openapi.BuildPaths(wardleGV, resources, openapi.PathsConfig{
		Style: openapi.Installer,
		DefinitionName: func(gvk schema.GroupVersionKind) (string, bool) {
			if gvk.GroupVersion() == wardleGV {
				return flunderPrefix + gvk.Kind, true
			}
			return defs.NameForGVK(gvk)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	v2defs := map[string]any{}
	for _, kind := range []string{"Flunder", "FlunderList", "Fischer", "FischerList"} {
		v2defs[flunderPrefix+kind] = map[string]any{"type": "object", "properties": map[string]any{
			"metadata": map[string]any{"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
		}}
	}
	builtin, err := defs.SchemasV2ForNames("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
		"io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
		"io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent", "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range builtin {
		v2defs[k] = v
	}
	doc := map[string]any{"swagger": "2.0", "paths": paths.V2(), "definitions": v2defs}
	v2 = reencode(t, doc)
	shareParameters(t, v2)
	v3 = reencode(t, openapi.NewDocumentV3(nil, paths.V3(), nil))
	return v2, v3
}

func reencode(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// shareParameters moves doc's path and query parameters (but dryRun and
// fieldValidation) to its "parameters", named <name>-<hash of the
// parameter>, and references them.
func shareParameters(t *testing.T, doc map[string]any) {
	t.Helper()
	shared := map[string]any{}
	share := func(list any) []any {
		var out []any
		for _, p := range list.([]any) {
			m := p.(map[string]any)
			if m["in"] == "body" || m["name"] == "dryRun" || m["name"] == "fieldValidation" {
				out = append(out, m)
				continue
			}
			b, _ := json.Marshal(m)
			sum := sha256.Sum256(b)
			name := fmt.Sprintf("%s-%s", m["name"], base64.RawURLEncoding.EncodeToString(sum[:6]))
			shared[name] = m
			out = append(out, map[string]any{"$ref": "#/parameters/" + name})
		}
		return out
	}
	for _, item := range doc["paths"].(map[string]any) {
		pi := item.(map[string]any)
		for k, v := range pi {
			if k == "parameters" {
				pi[k] = share(v)
				continue
			}
			if op, ok := v.(map[string]any); ok && op["parameters"] != nil {
				op["parameters"] = share(op["parameters"])
			}
		}
	}
	doc["parameters"] = shared
}

// The merged documents keep every operation of an aggregated server built
// on k8s.io/apiserver, with all their parameters: in v2 the shared
// parameters its paths reference are merged with them (and go with
// them), in v3 its document is served as is.
func TestMergedOperationsMatchUpstream(t *testing.T) {
	set, err := openapitest.Expected("aggregated-wardle")
	if err != nil {
		t.Fatal(err)
	}
	v2, v3 := wardleDocuments(t)
	h := newOpenAPIHead(t)
	b := newBackend(t)
	b.set(func(b *backend) {
		b.aggregated = aggregatedList(group("wardle.example.com", "v1alpha1", wardleResources()))
		b.v2 = v2
		b.v3 = map[string]any{wardleV3Path: v3}
	})
	c, err := New(Config{Discovery: h.disco, OpenAPI: h.oa, Targets: newTargets(map[string]*backend{"v1alpha1.wardle.example.com": b}), Resync: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	c.Sync([]*apiregistrationv1.APIService{apiService("wardle.example.com", "v1alpha1", 100, 15, true)})

	check := func(version, path string, summarize func([]byte) ([]string, error)) string {
		code, body := h.get(t, path, "application/json")
		if code != http.StatusOK {
			return fmt.Sprintf("GET %s: %d", path, code)
		}
		ops, err := summarize(body)
		if err != nil {
			return err.Error()
		}
		missing, extra := set.Diff(set.Select(ops))
		if len(missing) > 0 || len(extra) > 0 {
			return fmt.Sprintf("merged %s operations differ from upstream's\nmissing:\n  %s\nextra:\n  %s", version,
				strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
		}
		return ""
	}
	eventually(t, wait, func() string { return check("v2", "/openapi/v2", openapitest.SummarizeV2) })
	eventually(t, wait, func() string { return check("v3", "/openapi/v3/"+wardleV3Path, openapitest.SummarizeV3) })

	// kubectl finds server-side field validation on the merged PATCH.
	_, body := h.get(t, "/openapi/v2", "application/json")
	if !strings.Contains(string(body), `"name":"fieldValidation"`) {
		t.Error("merged v2 has no fieldValidation parameter")
	}

	c.Sync(nil)
	eventually(t, wait, func() string {
		_, body := h.get(t, "/openapi/v2", "application/json")
		var doc struct {
			Paths      map[string]json.RawMessage `json:"paths"`
			Parameters map[string]json.RawMessage `json:"parameters"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			return err.Error()
		}
		if len(doc.Parameters) != 0 || len(doc.Paths) != 1 {
			return fmt.Sprintf("after removal: paths %v parameters %v, want only the chain's path", sortedKeys(doc.Paths), sortedKeys(doc.Parameters))
		}
		return ""
	})
}

// A shared parameter two APIServices reference stays until the last of
// them goes; one the chain defines itself is never replaced.
func TestSharedParameters(t *testing.T) {
	h := newOpenAPIHead(t)
	h.oa.MergeV2Parameters(map[string]any{"ours-1": map[string]any{"in": "query", "name": "ours"}})
	b := newBackend(t)
	param := func(name string) map[string]any { return map[string]any{"$ref": "#/parameters/" + name} }
	b.set(func(b *backend) {
		b.aggregated = aggregatedList()
		b.v2 = map[string]any{
			"paths": map[string]any{
				"/apis/wardle.example.com/v1alpha1/a": map[string]any{"parameters": []any{param("pretty-1"), param("ours-1")}},
				"/apis/wardle.example.com/v1beta1/b":  map[string]any{"get": map[string]any{"parameters": []any{param("pretty-1")}}},
			},
			"parameters": map[string]any{
				"pretty-1": map[string]any{"in": "query", "name": "pretty", "type": "string"},
				"ours-1":   map[string]any{"in": "query", "name": "theirs"},
				"unused-1": map[string]any{"in": "query", "name": "unused"},
			},
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
	params := func() map[string]map[string]any {
		_, body := h.get(t, "/openapi/v2", "application/json")
		var doc struct {
			Parameters map[string]map[string]any `json:"parameters"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Parameters
	}
	alpha := apiService("wardle.example.com", "v1alpha1", 100, 15, true)
	beta := apiService("wardle.example.com", "v1beta1", 100, 10, true)
	c.Sync([]*apiregistrationv1.APIService{alpha, beta})
	eventually(t, wait, func() string {
		if got := sortedKeys(params()); fmt.Sprint(got) != "[ours-1 pretty-1]" {
			return fmt.Sprintf("parameters %v, want ours-1 and pretty-1 (not the unreferenced one)", got)
		}
		return ""
	})
	if got := params()["ours-1"]["name"]; got != "ours" {
		t.Errorf("the chain's parameter ours-1 names %v, want ours (not the backend's copy)", got)
	}
	c.Sync([]*apiregistrationv1.APIService{beta})
	eventually(t, wait, func() string {
		if got := sortedKeys(params()); fmt.Sprint(got) != "[ours-1 pretty-1]" {
			return fmt.Sprintf("after removing one: parameters %v, want pretty-1 kept for v1beta1", got)
		}
		return ""
	})
	c.Sync(nil)
	eventually(t, wait, func() string {
		if got := sortedKeys(params()); fmt.Sprint(got) != "[ours-1]" {
			return fmt.Sprintf("after removing both: parameters %v, want only the chain's own", got)
		}
		return ""
	})
}
