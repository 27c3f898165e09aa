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
