package discovery

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestLocalGroupVersionsAndSubscribe(t *testing.T) {
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	changes, stop := m.Subscribe()
	defer stop()

	res := []metav1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: metav1.Verbs{"get"}}}
	local := schema.GroupVersion{Group: "example.com", Version: "v1"}
	remote := schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}
	if err := m.AddGroupVersion(remote, nil, Remote(), Stale()); err != nil {
		t.Fatal(err)
	}
	if err := m.AddGroupVersion(local, res); err != nil {
		t.Fatal(err)
	}
	if err := m.AddGroupVersion(schema.GroupVersion{Version: "v1"}, res); err != nil {
		t.Fatal(err)
	}

	// Three changes coalesce into one pending notification.
	select {
	case <-changes:
	default:
		t.Fatal("got no notification after changes, want one")
	}
	select {
	case <-changes:
		t.Fatal("got a second pending notification, want them coalesced")
	default:
	}

	want := []schema.GroupVersion{{Version: "v1"}, local}
	if got := m.LocalGroupVersions(); !slices.Equal(got, want) {
		t.Errorf("got local group-versions %v, want %v", got, want)
	}
	if got := len(m.GroupVersions()); got != 3 {
		t.Errorf("got %d group-versions, want 3 (remote ones included)", got)
	}

	m.RemoveGroupVersion(local)
	select {
	case <-changes:
	default:
		t.Fatal("got no notification after remove, want one")
	}
	// Removing an absent group-version changes nothing.
	m.RemoveGroupVersion(local)
	select {
	case <-changes:
		t.Fatal("got a notification for a no-op remove")
	default:
	}

	// After stop, nothing more arrives.
	stop()
	if err := m.AddGroupVersion(local, res); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
		t.Fatal("got a notification after the subscription ended")
	default:
	}
}

// A remote group-version hides a local one of the same name (its
// requests are proxied) and the local one shows again when it goes.
func TestRemoteHidesLocal(t *testing.T) {
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	local := []metav1.APIResource{{Name: "widgets", Kind: "Widget", Verbs: metav1.Verbs{"get"}}}
	remote := []metav1.APIResource{{Name: "gadgets", Kind: "Gadget", Verbs: metav1.Verbs{"get"}}}
	if err := m.AddGroupVersion(gv, local); err != nil {
		t.Fatal(err)
	}
	if err := m.AddGroupVersion(gv, remote, Remote()); err != nil {
		t.Fatal(err)
	}
	resources := func() []string {
		var out []string
		for _, g := range m.snap.Load().aggAPIs.list.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					out = append(out, r.Resource)
				}
			}
		}
		return out
	}
	if got := resources(); !slices.Equal(got, []string{"gadgets"}) {
		t.Errorf("with both: got %v, want the remote gadgets", got)
	}
	if got := m.LocalGroupVersions(); !slices.Equal(got, []schema.GroupVersion{gv}) {
		t.Errorf("got local group-versions %v, want %v", got, gv)
	}
	m.RemoveGroupVersion(gv, Remote())
	if got := resources(); !slices.Equal(got, []string{"widgets"}) {
		t.Errorf("after the remote went: got %v, want the local widgets", got)
	}
	m.RemoveGroupVersion(gv)
	if got := resources(); len(got) != 0 {
		t.Errorf("after both went: got %v, want none", got)
	}
}
