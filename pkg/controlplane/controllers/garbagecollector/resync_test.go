package garbagecollector

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// A CRD change resyncs its group alone and in place (resyncGroups,
// updateMonitors): after each change the resources monitored, and those
// the sync loop holds, are what all of discovery gives; the monitors of
// other groups are the same ones, not restarted; a resource or group
// gone has its monitor stopped.
func TestResyncGroupsInPlace(t *testing.T) {
	all := metav1.Verbs{"create", "delete", "get", "list", "watch"}
	var mu sync.Mutex
	docs := map[string]any{}
	set := func(path string, doc any) {
		mu.Lock()
		defer mu.Unlock()
		if doc == nil {
			delete(docs, path)
			return
		}
		docs[path] = doc
	}
	groups := map[string]metav1.APIGroup{}
	setGroup := func(g *metav1.APIGroup, lists map[string]*metav1.APIResourceList) {
		groups[g.Name] = *g
		set("/apis/"+g.Name, withKind(*g))
		for v, l := range lists {
			set("/apis/"+g.Name+"/"+v, l)
		}
	}
	publishGroupList := func() {
		list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		for _, g := range []string{"a.example.com", "b.example.com"} {
			if gr, ok := groups[g]; ok {
				list.Groups = append(list.Groups, gr)
			}
		}
		set("/apis", list)
	}
	set("/api", &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	set("/api/v1", resources("v1", metav1.APIResource{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: all}))
	ga := group("a.example.com", "v1")
	setGroup(&ga, map[string]*metav1.APIResourceList{"v1": resources("a.example.com/v1",
		metav1.APIResource{Name: "things", Kind: "Thing", Namespaced: true, Verbs: all},
		metav1.APIResource{Name: "others", Kind: "Other", Verbs: all})})
	publishGroupList()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		doc, ok := docs[r.URL.Path]
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok || r.URL.Query().Has("watch") || r.URL.Query().Has("resourceVersion") || r.URL.Query().Has("limit") {
			// The monitors' lists and watches: not served here.
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
			return
		}
		_ = json.NewEncoder(w).Encode(doc)
	}))
	defer srv.Close()
	gc, err := New(Config{Client: &rest.Config{Host: srv.URL}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		gc.monitors.stopAll()
	}()

	check := func(step string, current map[schema.GroupVersionResource]string) {
		t.Helper()
		whole, failed, err := deletableResources(ctx, gc.discovery)
		if err != nil || len(failed) > 0 {
			t.Fatalf("%s: deletableResources: %v, failed %v", step, err, failed)
		}
		if !maps.Equal(current, whole) {
			t.Errorf("%s: the sync loop holds %v, discovery gives %v", step, current, whole)
		}
		if got := gc.monitors.resources(); !maps.Equal(got, whole) {
			t.Errorf("%s: monitored %v, discovery gives %v", step, got, whole)
		}
	}
	monitorOf := func(r schema.GroupVersionResource) *monitor {
		gc.monitors.mu.RLock()
		defer gc.monitors.mu.RUnlock()
		return gc.monitors.byR[r]
	}
	things := schema.GroupVersionResource{Group: "a.example.com", Version: "v1", Resource: "things"}
	gadgets := schema.GroupVersionResource{Group: "b.example.com", Version: "v1", Resource: "gadgets"}

	current := gc.resyncMonitors(ctx, nil)
	check("start", current)
	before := monitorOf(things)

	// A CRD of a new group.
	gb := group("b.example.com", "v1")
	setGroup(&gb, map[string]*metav1.APIResourceList{"v1": resources("b.example.com/v1", metav1.APIResource{Name: "gadgets", Kind: "Gadget", Namespaced: true, Verbs: all})})
	publishGroupList()
	current = gc.resyncGroups(ctx, current, map[string]bool{"b.example.com": true})
	check("group b added", current)
	if monitorOf(things) != before || monitorOf(gadgets) == nil {
		t.Error("group b added: group a's monitor was replaced, or b's not started")
	}

	// One of group a's CRDs deleted: its monitor is stopped (its cancel,
	// wrapped here, called).
	stopped := make(chan struct{})
	gc.monitors.mu.Lock()
	stop := before.cancel
	before.cancel = func() { stop(); close(stopped) }
	gc.monitors.mu.Unlock()
	set("/apis/a.example.com/v1", resources("a.example.com/v1", metav1.APIResource{Name: "others", Kind: "Other", Verbs: all}))
	current = gc.resyncGroups(ctx, current, map[string]bool{"a.example.com": true})
	check("things removed", current)
	if monitorOf(things) != nil {
		t.Error("things removed: its monitor is still held")
	}
	select {
	case <-stopped:
	default:
		t.Error("things removed: its monitor was not stopped")
	}

	// Group b gone.
	delete(groups, "b.example.com")
	set("/apis/b.example.com", nil)
	set("/apis/b.example.com/v1", nil)
	publishGroupList()
	current = gc.resyncGroups(ctx, current, map[string]bool{"b.example.com": true})
	check("group b removed", current)

	// Nothing changed: the same map back, no work.
	if again := gc.resyncGroups(ctx, current, map[string]bool{"a.example.com": true}); !maps.Equal(again, current) {
		t.Error("a resync without changes changed what is held")
	}
}
