package openapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/openapi/openapitest"
)

var all = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// The resources as kapi's installer describes them (discovery verbs).
var builtin = map[string]struct {
	gv        schema.GroupVersion
	resources []metav1.APIResource
}{
	"configmaps": {schema.GroupVersion{Version: "v1"}, []metav1.APIResource{
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: all},
	}},
	"services": {schema.GroupVersion{Version: "v1"}, []metav1.APIResource{
		{Name: "services", Namespaced: true, Kind: "Service", Verbs: all},
		{Name: "services/status", Namespaced: true, Kind: "Service", Verbs: []string{"get", "patch", "update"}},
	}},
	"namespaces": {schema.GroupVersion{Version: "v1"}, []metav1.APIResource{
		{Name: "namespaces", Kind: "Namespace", Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
		{Name: "namespaces/finalize", Kind: "Namespace", Verbs: []string{"update"}},
		{Name: "namespaces/status", Kind: "Namespace", Verbs: []string{"get", "patch", "update"}},
	}},
	"leases": {schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}, []metav1.APIResource{
		{Name: "leases", Namespaced: true, Kind: "Lease", Verbs: all},
	}},
	"customresourcedefinitions": {schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}, []metav1.APIResource{
		{Name: "customresourcedefinitions", Kind: "CustomResourceDefinition", Verbs: all},
		{Name: "customresourcedefinitions/status", Kind: "CustomResourceDefinition", Verbs: []string{"get", "patch", "update"}},
	}},
}

// summaries renders p as v2 and v3 and reduces both to operation lines.
func summaries(t *testing.T, p *openapi.Paths) (v2, v3 []string) {
	t.Helper()
	b2, err := json.Marshal(map[string]any{"swagger": "2.0", "paths": p.V2()})
	if err != nil {
		t.Fatal(err)
	}
	b3, err := json.Marshal(openapi.NewDocumentV3(nil, p.V3(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if v2, err = openapitest.SummarizeV2(b2); err != nil {
		t.Fatal(err)
	}
	if v3, err = openapitest.SummarizeV3(b3); err != nil {
		t.Fatal(err)
	}
	return v2, v3
}

func compare(t *testing.T, set *openapitest.Set, version string, got []string) {
	t.Helper()
	missing, extra := set.Diff(set.Select(got))
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("%s operations differ from upstream's\nmissing:\n  %s\nextra:\n  %s", version,
			strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
	}
}

func TestBuiltinOperationsMatchUpstream(t *testing.T) {
	t.Parallel()
	defs := openapi.Default()
	for name, b := range builtin {
		t.Run(name, func(t *testing.T) {
			set, err := openapitest.Expected(name)
			if err != nil {
				t.Fatal(err)
			}
			p, err := defs.Paths(b.gv, openapi.ResourcesOf(b.gv, b.resources))
			if err != nil {
				t.Fatal(err)
			}
			v2, v3 := summaries(t, p)
			compare(t, set, "v2", v2)
			compare(t, set, "v3", v3)
		})
	}
}

func TestCustomResourceOperationsMatchUpstream(t *testing.T) {
	t.Parallel()
	set, err := openapitest.Expected("customresource")
	if err != nil {
		t.Fatal(err)
	}
	gv := schema.GroupVersion{Group: "openapi.e2e.kapi.dev", Version: "v1"}
	widget := gv.WithKind("Widget")
	resources := []openapi.Resource{
		{Name: "widgets", Namespaced: true, Kind: widget, ListKind: "WidgetList"},
		{Name: "widgets/status", Namespaced: true, Kind: widget},
		{Name: "widgets/scale", Namespaced: true, Kind: schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}},
	}
	defs := openapi.Default()
	p, err := openapi.BuildPaths(gv, resources, openapi.PathsConfig{
		Style: openapi.CustomResource,
		DefinitionName: func(gvk schema.GroupVersionKind) (string, bool) {
			if gvk.GroupVersion() == gv {
				return "dev.kapi.e2e.openapi.v1." + gvk.Kind, true
			}
			return defs.NameForGVK(gvk)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	v2, v3 := summaries(t, p)
	compare(t, set, "v2", v2)
	compare(t, set, "v3", v3)
	if got, want := p.Definitions(), []string{
		"dev.kapi.e2e.openapi.v1.Widget", "dev.kapi.e2e.openapi.v1.WidgetList",
		"io.k8s.api.autoscaling.v1.Scale",
		"io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.Patch", "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
	}; !slices.Equal(got, want) {
		t.Errorf("definitions referenced = %v, want %v", got, want)
	}

	// Scale's operations read and write a Scale, under the custom kind.
	scale := p.V3()["/apis/openapi.e2e.kapi.dev/v1/namespaces/{namespace}/widgets/{name}/scale"]
	if ref := scale.Put.RequestBody.Content["application/json"].Schema.Ref.String(); ref != "#/components/schemas/io.k8s.api.autoscaling.v1.Scale" {
		t.Errorf("scale PUT body = %s, want autoscaling/v1 Scale", ref)
	}
	if got := scale.Patch.RequestBody.Content; len(got) != 3 || got["application/strategic-merge-patch+json"] != nil {
		t.Errorf("custom resource patch types = %v, want JSON, merge and apply patches only", keys(got))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The shapes kubectl and generated clients rely on: bodies, responses
// and media types per operation, the extensions, the parameters shared by
// a path's operations on the path.
func TestOperationShapes(t *testing.T) {
	t.Parallel()
	gv := schema.GroupVersion{Version: "v1"}
	p, err := openapi.Default().Paths(gv, openapi.ResourcesOf(gv, builtin["configmaps"].resources))
	if err != nil {
		t.Fatal(err)
	}
	v3 := p.V3()
	item := v3["/api/v1/namespaces/{namespace}/configmaps/{name}"]
	var pathParams []string
	for _, prm := range item.Parameters {
		pathParams = append(pathParams, prm.Name)
	}
	if want := []string{"name", "namespace", "pretty"}; !slices.Equal(pathParams, want) {
		t.Errorf("item path parameters = %v, want %v", pathParams, want)
	}
	patch := item.Patch
	if got := keys(patch.RequestBody.Content); !slices.Equal(got, []string{
		"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json",
	}) {
		t.Errorf("patch request media types = %v", got)
	}
	if !patch.RequestBody.Required || patch.RequestBody.Content["application/json-patch+json"].Schema.Ref.String() != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" {
		t.Errorf("patch request body = %+v, want a required Patch", patch.RequestBody)
	}
	// Keys in kube-apiserver v1.37.2's order in its v3 documents.
	if gvk, err := json.Marshal(patch.Extensions[openapi.ExtensionGVK]); err != nil || string(gvk) != `{"group":"","version":"v1","kind":"ConfigMap"}` {
		t.Errorf("patch %s = %s (%v), want v1 ConfigMap as group, version, kind", openapi.ExtensionGVK, gvk, err)
	}
	if a := patch.Extensions[openapi.ExtensionAction]; a != "patch" {
		t.Errorf("patch action = %v", a)
	}
	codes := func(op *spec3.Operation) []int {
		var out []int
		for c := range op.Responses.StatusCodeResponses {
			out = append(out, c)
		}
		slices.Sort(out)
		return out
	}
	coll := v3["/api/v1/namespaces/{namespace}/configmaps"]
	for _, tc := range []struct {
		name string
		op   *spec3.Operation
		want []int
	}{
		{"get", item.Get, []int{200, 401}},
		{"put", item.Put, []int{200, 201, 401}},
		{"patch", item.Patch, []int{200, 201, 401}},
		{"delete", item.Delete, []int{200, 202, 401}},
		{"create", coll.Post, []int{200, 201, 202, 401}},
		{"deletecollection", coll.Delete, []int{200, 401}},
		{"list", coll.Get, []int{200, 401}},
	} {
		if got := codes(tc.op); !slices.Equal(got, tc.want) {
			t.Errorf("%s response codes = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := keys(coll.Get.Responses.StatusCodeResponses[200].Content); !slices.Contains(got, "application/json;stream=watch") || !slices.Contains(got, "application/vnd.kubernetes.protobuf") {
		t.Errorf("list response media types = %v, want the stream and protobuf ones too", got)
	}
	if item.Delete.RequestBody == nil || item.Delete.RequestBody.Required {
		t.Errorf("delete request body = %+v, want an optional DeleteOptions", item.Delete.RequestBody)
	}

	v2 := p.V2()["/api/v1/namespaces/{namespace}/configmaps/{name}"]
	if got := v2.Patch.Consumes; !slices.Contains(got, "application/strategic-merge-patch+json") {
		t.Errorf("v2 patch consumes %v", got)
	}
	if got := v2.Put.Consumes; !slices.Equal(got, []string{"*/*"}) {
		t.Errorf("v2 put consumes %v, want */*", got)
	}
	if len(v2.Put.Schemes) != 1 || v2.Put.Schemes[0] != "https" || len(v2.Put.Tags) != 1 || v2.Put.Tags[0] != "core_v1" {
		t.Errorf("v2 put schemes %v tags %v", v2.Put.Schemes, v2.Put.Tags)
	}
	if _, ok := v2.Delete.Responses.StatusCodeResponses[401]; !ok {
		t.Error("v2 delete has no 401")
	}
}

func TestOperationIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		gv       schema.GroupVersion
		resource openapi.Resource
		path     string
		method   string
		want     string
	}{
		{schema.GroupVersion{Version: "v1"}, openapi.Resource{Name: "secrets", Namespaced: true, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, Verbs: all},
			"/api/v1/namespaces/{namespace}/secrets", "delete", "deleteCoreV1CollectionNamespacedSecret"},
		{schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}, openapi.Resource{Name: "customresourcedefinitions", Kind: schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, Verbs: all},
			"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "post", "createApiextensionsV1CustomResourceDefinition"},
		{schema.GroupVersion{Group: "apps", Version: "v1"}, openapi.Resource{Name: "deployments", Namespaced: true, Kind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Verbs: all},
			"/apis/apps/v1/watch/deployments", "get", "watchAppsV1DeploymentListForAllNamespaces"},
		{schema.GroupVersion{Group: "authentication.k8s.io", Version: "v1"}, openapi.Resource{Name: "tokenreviews", Kind: schema.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenReview"}, Verbs: []string{"create"}},
			"/apis/authentication.k8s.io/v1/tokenreviews", "post", "createAuthenticationV1TokenReview"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			p, err := openapi.Default().Paths(tt.gv, []openapi.Resource{tt.resource})
			if err != nil {
				t.Fatal(err)
			}
			item := p.V2()[tt.path]
			if item == nil {
				t.Fatalf("no path %s in %v", tt.path, p.PathNames())
			}
			var got string
			switch tt.method {
			case "get":
				got = item.Get.ID
			case "post":
				got = item.Post.ID
			case "delete":
				got = item.Delete.ID
			}
			if got != tt.want {
				t.Errorf("operation ID = %q, want %q", got, tt.want)
			}
		})
	}
}

// A kind without a definition is an error, not a document with dangling
// references.
func TestUnknownKind(t *testing.T) {
	t.Parallel()
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	_, err := openapi.Default().Paths(gv, []openapi.Resource{{Name: "widgets", Kind: gv.WithKind("Widget"), Verbs: all}})
	if err == nil || !strings.Contains(err.Error(), "no OpenAPI definition") {
		t.Errorf("got %v, want an error naming the missing definition", err)
	}
}

// An operation's x-kubernetes-group-version-kind is written as
// kube-apiserver v1.37.2 writes it: in v3 always group, version, kind; in
// v2 sorted (group, kind, version), except for apiregistration.k8s.io,
// whose paths kube-aggregator serves as built (group, version, kind).
func TestOperationGVKKeyOrder(t *testing.T) {
	for _, tc := range []struct {
		gv       schema.GroupVersion
		resource metav1.APIResource
		v2, v3   string
	}{
		{schema.GroupVersion{Version: "v1"}, metav1.APIResource{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: all},
			`{"group":"","kind":"ConfigMap","version":"v1"}`, `{"group":"","version":"v1","kind":"ConfigMap"}`},
		{schema.GroupVersion{Group: "apiregistration.k8s.io", Version: "v1"}, metav1.APIResource{Name: "apiservices", Kind: "APIService", Verbs: all},
			`{"group":"apiregistration.k8s.io","version":"v1","kind":"APIService"}`, `{"group":"apiregistration.k8s.io","version":"v1","kind":"APIService"}`},
	} {
		p, err := openapi.Default().Paths(tc.gv, openapi.ResourcesOf(tc.gv, []metav1.APIResource{tc.resource}))
		if err != nil {
			t.Fatal(err)
		}
		b2, err := json.Marshal(p.V2())
		if err != nil {
			t.Fatal(err)
		}
		b3, err := json.Marshal(p.V3())
		if err != nil {
			t.Fatal(err)
		}
		const key = `"x-kubernetes-group-version-kind":`
		for _, c := range []struct {
			name      string
			doc, want string
		}{{"v2", string(b2), tc.v2}, {"v3", string(b3), tc.v3}} {
			n := strings.Count(c.doc, key)
			if n == 0 || strings.Count(c.doc, key+c.want) != n {
				t.Errorf("%s %s: %d operations, not all with %s%s", tc.gv, c.name, n, key, c.want)
			}
		}
	}
}
