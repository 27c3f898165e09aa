package garbagecollector

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// The deletable resources of one group, read from its own discovery
// documents, are those all of discovery gives for that group: the same
// preferred version per resource (the group's preferred one if it has
// the resource, else the first listing it), subresources and resources
// that cannot be deleted, listed and watched left out, a group not
// served empty.
func TestGroupDeletableResourcesMatchAll(t *testing.T) {
	all := metav1.Verbs{"create", "delete", "get", "list", "watch"}
	docs := map[string]any{
		"/api": &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}},
		"/api/v1": &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: all}}},
		"/apis": &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{
			group("example.com", "v2", "v1", "v3"), group("other.example.com", "v1"),
		}},
		"/apis/example.com":    withKind(group("example.com", "v2", "v1", "v3")),
		"/apis/example.com/v2": resources("example.com/v2", metav1.APIResource{Name: "things", Kind: "Thing", Namespaced: true, Verbs: all}, metav1.APIResource{Name: "things/status", Kind: "Thing", Verbs: all}),
		"/apis/example.com/v1": resources("example.com/v1",
			metav1.APIResource{Name: "things", Kind: "Thing", Namespaced: true, Verbs: all},
			metav1.APIResource{Name: "olds", Kind: "Old", Verbs: all},
			metav1.APIResource{Name: "reviews", Kind: "Review", Verbs: metav1.Verbs{"create"}}),
		"/apis/example.com/v3": resources("example.com/v3",
			metav1.APIResource{Name: "olds", Kind: "Old", Verbs: all},
			metav1.APIResource{Name: "news", Kind: "New", Verbs: all}),
		"/apis/other.example.com":    withKind(group("other.example.com", "v1")),
		"/apis/other.example.com/v1": resources("other.example.com/v1", metav1.APIResource{Name: "gadgets", Kind: "Gadget", Verbs: all}),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	defer srv.Close()
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	whole, failed, err := deletableResources(ctx, dc)
	if err != nil || len(failed) > 0 {
		t.Fatalf("deletableResources: %v, failed %v", err, failed)
	}
	for _, g := range []string{"example.com", "other.example.com", "absent.example.com"} {
		want := map[schema.GroupVersionResource]string{}
		for r, kind := range whole {
			if r.Group == g {
				want[r] = kind
			}
		}
		got, err := groupDeletableResources(ctx, dc, g)
		if err != nil {
			t.Fatalf("group %s: %v", g, err)
		}
		if !maps.Equal(got, want) {
			t.Errorf("group %s: got %v, want %v", g, got, want)
		}
	}
	// The case the choice rule is about.
	if got := whole[schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "olds"}]; got != "Old" {
		t.Errorf("olds: got kind %q in v1, want Old (first version listing it)", got)
	}
}

func group(name string, versions ...string) metav1.APIGroup {
	g := metav1.APIGroup{Name: name}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
	}
	g.PreferredVersion = g.Versions[0]
	return g
}

func withKind(g metav1.APIGroup) *metav1.APIGroup {
	g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	return &g
}

func resources(gv string, rs ...metav1.APIResource) *metav1.APIResourceList {
	return &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv, APIResources: rs}
}
