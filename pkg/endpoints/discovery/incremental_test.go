package discovery

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A change rebuilds only its groups and reuses the others' documents
// (group, Manager.build): whatever the history of changes, the documents
// served must be those of a Manager given the resulting state afresh.
// Random adds and removes, local and remote, with random priorities,
// across the core group and seven others.
func TestIncrementalBuildMatchesFresh(t *testing.T) {
	groups := []string{"", "apps", "batch", "stable.example.com", "zoo.example.com", "a.b.c", "metrics.k8s.io", "x"}
	versions := []string{"v1", "v1beta1", "v2", "v1alpha1"}
	type held struct {
		prio      Priority
		resources []metav1.APIResource
	}
	resourcesOf := func(gv schema.GroupVersion, n int) []metav1.APIResource {
		var rs []metav1.APIResource
		for i := range n {
			name := fmt.Sprintf("things%d", i)
			rs = append(rs,
				metav1.APIResource{Name: name, SingularName: fmt.Sprintf("thing%d", i), Namespaced: i%2 == 0, Kind: fmt.Sprintf("Thing%d", i), Verbs: crud},
				metav1.APIResource{Name: name + "/status", Namespaced: i%2 == 0, Kind: fmt.Sprintf("Thing%d", i), Verbs: []string{"get", "patch", "update"}})
		}
		return rs
	}
	rng := rand.New(rand.NewPCG(1, 20))
	cfg := Config{ExternalAddress: testExternalAddress}
	m := newManager(t, cfg)
	local, remote := map[schema.GroupVersion]held{}, map[schema.GroupVersion]held{}
	for op := range 300 {
		gv := schema.GroupVersion{Group: groups[rng.IntN(len(groups))], Version: versions[rng.IntN(len(versions))]}
		h := held{prio: Priority{Group: int32(rng.IntN(3)) * 1000, Version: int32(rng.IntN(3)) * 5}, resources: resourcesOf(gv, 1+rng.IntN(3))}
		switch rng.IntN(4) {
		case 0, 1:
			if err := m.AddGroupVersion(gv, h.resources, WithPriority(h.prio)); err != nil {
				t.Fatal(err)
			}
			local[gv] = h
		case 2:
			if rng.IntN(2) == 0 {
				if err := m.AddGroupVersion(gv, h.resources, WithPriority(h.prio), Remote()); err != nil {
					t.Fatal(err)
				}
				remote[gv] = h
			} else {
				m.RemoveGroupVersion(gv, Remote())
				delete(remote, gv)
			}
		case 3:
			m.RemoveGroupVersion(gv)
			delete(local, gv)
		}

		fresh := newManager(t, cfg)
		for gv, h := range local {
			if err := fresh.AddGroupVersion(gv, h.resources, WithPriority(h.prio)); err != nil {
				t.Fatal(err)
			}
		}
		for gv, h := range remote {
			if err := fresh.AddGroupVersion(gv, h.resources, WithPriority(h.prio), Remote()); err != nil {
				t.Fatal(err)
			}
		}
		got, want := m.snap.Load(), fresh.snap.Load()
		same := func(what string, a, b *document) {
			t.Helper()
			if (a == nil) != (b == nil) {
				t.Fatalf("op %d: %s: present %v, fresh %v", op, what, a != nil, b != nil)
			}
			if a == nil {
				return
			}
			ab, err := a.bytes(encJSON)
			if err != nil {
				t.Fatal(err)
			}
			bb, err := b.bytes(encJSON)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ab, bb) {
				t.Fatalf("op %d: %s differs from a fresh Manager's:\n%s\nfresh:\n%s", op, what, ab, bb)
			}
		}
		same("/apis", got.groupList, want.groupList)
		same("/apis aggregated", got.aggAPIs.v2, want.aggAPIs.v2)
		same("/api aggregated", got.aggAPI.v2, want.aggAPI.v2)
		same("/api", got.apiVersions, want.apiVersions)
		if fmt.Sprint(got.coreVersions) != fmt.Sprint(want.coreVersions) {
			t.Fatalf("op %d: core versions %v, fresh %v", op, got.coreVersions, want.coreVersions)
		}
		if len(got.groups) != len(want.groups) {
			t.Fatalf("op %d: %d group documents, fresh %d", op, len(got.groups), len(want.groups))
		}
		for g, d := range want.groups {
			same("/apis/"+g, got.groups[g], d)
		}
	}
}

// BenchmarkAddAmong1000 adds and removes one group-version while 1,000
// CRD-like ones (ten per group) are held: the work of a change should be
// that of its group (issue 18, point 5).
func BenchmarkAddAmong1000(b *testing.B) {
	m := newManager(b, Config{})
	set := map[schema.GroupVersion][]metav1.APIResource{}
	for i := range 1000 {
		gv := schema.GroupVersion{Group: fmt.Sprintf("g%d.bench.kapi.dev", i/10), Version: fmt.Sprintf("v%d", i%10+1)}
		set[gv] = []metav1.APIResource{{Name: "things", SingularName: "thing", Namespaced: true, Kind: "Thing", Verbs: crud}}
	}
	if err := m.Update(set, nil, WithResponseKindGroupVersion()); err != nil {
		b.Fatal(err)
	}
	gv := schema.GroupVersion{Group: "new.bench.kapi.dev", Version: "v1"}
	res := []metav1.APIResource{{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget", Verbs: crud}}
	b.ReportAllocs()
	for b.Loop() {
		if err := m.AddGroupVersion(gv, res, WithResponseKindGroupVersion()); err != nil {
			b.Fatal(err)
		}
		m.RemoveGroupVersion(gv)
	}
}
