package discovery

import (
	"slices"
	"strings"
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

// Update changes several group-versions in one step: a reader sees the
// versions of a group appear and go together, and a failing Update
// changes nothing.
func TestUpdateIsOneStep(t *testing.T) {
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	res := []metav1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: metav1.Verbs{"get"}}}
	v1 := schema.GroupVersion{Group: "example.com", Version: "v1"}
	v2 := schema.GroupVersion{Group: "example.com", Version: "v2"}
	versions := func() []string {
		var out []string
		for _, g := range m.snap.Load().aggAPIs.list.Items {
			for _, v := range g.Versions {
				out = append(out, g.Name+"/"+v.Version)
			}
		}
		return out
	}

	done := make(chan struct{})
	seen := make(chan []string, 1)
	go func() {
		defer close(seen)
		for {
			select {
			case <-done:
				return
			default:
			}
			if got := versions(); len(got) == 1 {
				seen <- got
				return
			}
		}
	}()
	for range 200 {
		if err := m.Update(map[schema.GroupVersion][]metav1.APIResource{v1: res, v2: res}, nil); err != nil {
			t.Fatal(err)
		}
		if err := m.Update(nil, []schema.GroupVersion{v1, v2}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if got, ok := <-seen; ok {
		t.Fatalf("a reader saw %v alone, want both versions or none", got)
	}

	if err := m.Update(map[schema.GroupVersion][]metav1.APIResource{v1: res, {Group: "example.com"}: res}, nil); err == nil {
		t.Fatal("got no error for a group-version without a version")
	}
	if got := versions(); len(got) != 0 {
		t.Fatalf("a failed Update changed discovery: %v", got)
	}
	if err := m.Update(map[schema.GroupVersion][]metav1.APIResource{v1: res, v2: res}, nil, WithPriority(CRDPriority)); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(), []string{"example.com/v2", "example.com/v1"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// SubscribeChanges names what changed since the last take, local and
// remote, so a subscriber can do the work of the change alone.
func TestSubscribeChanges(t *testing.T) {
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	res := []metav1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: metav1.Verbs{"get"}}}
	before := schema.GroupVersion{Group: "before.example.com", Version: "v1"}
	if err := m.AddGroupVersion(before, res); err != nil {
		t.Fatal(err)
	}
	changes, take, stop := m.SubscribeChanges()
	defer stop()
	sorted := func() []schema.GroupVersion {
		got := take()
		slices.SortFunc(got, func(a, b schema.GroupVersion) int {
			if a.Group != b.Group {
				return strings.Compare(a.Group, b.Group)
			}
			return strings.Compare(a.Version, b.Version)
		})
		return got
	}
	if got := sorted(); len(got) != 0 {
		t.Fatalf("got %v before any change, want none (changes before Subscribe are not named)", got)
	}
	v1 := schema.GroupVersion{Group: "example.com", Version: "v1"}
	v2 := schema.GroupVersion{Group: "example.com", Version: "v2"}
	remote := schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}
	if err := m.Update(map[schema.GroupVersion][]metav1.APIResource{v1: res, v2: res}, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.AddGroupVersion(remote, nil, Remote()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	default:
		t.Fatal("got no notification, want one")
	}
	if got, want := sorted(), []schema.GroupVersion{v1, v2, remote}; !slices.Equal(got, want) {
		t.Errorf("got changes %v, want %v", got, want)
	}
	if got := sorted(); len(got) != 0 {
		t.Errorf("got %v again, want a take to clear them", got)
	}
	m.RemoveGroupVersion(v2)
	if got, want := sorted(), []schema.GroupVersion{v2}; !slices.Equal(got, want) {
		t.Errorf("after a remove: got %v, want %v", got, want)
	}
	if !m.HasLocal(v1) || m.HasLocal(v2) || m.HasLocal(remote) {
		t.Errorf("HasLocal: got v1 %t, v2 %t, remote %t; want true, false, false", m.HasLocal(v1), m.HasLocal(v2), m.HasLocal(remote))
	}
}
