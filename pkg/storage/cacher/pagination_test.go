package cacher

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// pageOf is what a list page says, for comparing the cache's answers with
// the underlying store's.
func pageOf(l *corev1.PodList) string {
	s := fmt.Sprintf("rv=%s continue=%q", l.ResourceVersion, l.Continue)
	if l.RemainingItemCount != nil {
		s += fmt.Sprintf(" remaining=%d", *l.RemainingItemCount)
	}
	for _, p := range l.Items {
		s += fmt.Sprintf(" %s@%s", p.Name, p.ResourceVersion)
	}
	return s
}

// asCached is what the cache answers for the underlying store's page l of
// the list of "/pods": the same, with the continue token in the watch
// cache's form (start "/ns/p00\u0000" where the store's is
// "ns/p00\u0000"), as kube-apiserver's cacher and etcd3 store write them.
func asCached(t *testing.T, l *corev1.PodList) *corev1.PodList {
	t.Helper()
	if l.Continue == "" {
		return l
	}
	key, rv, err := storage.DecodeContinue(l.Continue, "/pods/")
	if err != nil {
		t.Fatalf("store's token %q: %v", l.Continue, err)
	}
	c := l.DeepCopy()
	if c.Continue, err = storage.EncodeContinue(key, storage.ContinuePrefix("/pods", true), rv); err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *podEnv) listFrom(t *testing.T, s storage.Interface, opts storage.ListOptions) *corev1.PodList {
	t.Helper()
	opts.Recursive = true
	l := &corev1.PodList{}
	if err := s.GetList(e.ctx, "/pods", opts, l); err != nil {
		t.Fatalf("list %+v: %v", opts, err)
	}
	return l
}

// TestPaginatedListFromCache: a consistent paginated list is served from
// the cache, first page and continuations, while pods are written between
// pages; every page is the one the underlying store answers for the same
// request (the same items, revision, continue token and remaining count),
// and the tokens are interchangeable.
func TestPaginatedListFromCache(t *testing.T) {
	e := newPodEnv(t, envOptions{cacher: func(c *Config) { c.ConsistentReadWait = waitTimeout }})
	for i := range 25 {
		lbls := map[string]string{"odd": strconv.FormatBool(i%2 == 1)}
		e.create(fmt.Sprintf("p%02d", i), lbls)
	}
	odd := labels.SelectorFromSet(labels.Set{"odd": "true"})
	writes := 0
	for _, limit := range []int64{1, 7, 25, 30} {
		for _, sel := range []labels.Selector{nil, odd} {
			t.Run(fmt.Sprintf("limit=%d/selector=%v", limit, sel), func(t *testing.T) {
				pred := storage.SelectionPredicate{Limit: limit, Label: sel}
				through := e.c.stats.listsDelegated.Load()
				first := e.listFrom(t, e.c, storage.ListOptions{Predicate: pred})
				// The store's answer at the same revision: the legacy
				// exact paginated list.
				want := e.listFrom(t, e.under, storage.ListOptions{ResourceVersion: first.ResourceVersion, Predicate: pred})
				want = asCached(t, want)
				if pageOf(first) != pageOf(want) {
					t.Fatalf("first page:\n got %s\nwant %s", pageOf(first), pageOf(want))
				}
				seen := len(first.Items)
				for cont := first.Continue; cont != ""; {
					// Writes between pages do not change the list.
					writes++
					e.create(fmt.Sprintf("w%03d", writes), nil)
					e.relabel("p03", map[string]string{"odd": "true", "w": strconv.Itoa(writes)})
					pred.Continue = cont
					got := e.listFrom(t, e.c, storage.ListOptions{Predicate: pred})
					want := asCached(t, e.listFrom(t, e.under, storage.ListOptions{Predicate: pred}))
					if pageOf(got) != pageOf(want) {
						t.Fatalf("page after %q:\n got %s\nwant %s", cont, pageOf(got), pageOf(want))
					}
					if got.ResourceVersion != first.ResourceVersion {
						t.Fatalf("page at revision %s, want the first page's %s", got.ResourceVersion, first.ResourceVersion)
					}
					seen += len(got.Items)
					cont = got.Continue
				}
				all := e.listFrom(t, e.under, storage.ListOptions{ResourceVersion: first.ResourceVersion,
					ResourceVersionMatch: metav1.ResourceVersionMatchExact, Predicate: storage.SelectionPredicate{Label: sel}})
				if wantN := len(all.Items); seen != wantN {
					t.Fatalf("pages hold %d pods, want %d", seen, len(all.Items))
				}
				if n := e.c.stats.listsDelegated.Load() - through; n != 0 {
					t.Fatalf("%d pages were served by the store, want none", n)
				}
			})
		}
	}
}

// TestListFromCacheResourceVersions: every kind of list the cache serves
// from memory, including the wait for the cache to catch up with a
// revision the store already has.
func TestListFromCacheResourceVersions(t *testing.T) {
	e := newPodEnv(t, envOptions{cacher: func(c *Config) { c.ConsistentReadWait = waitTimeout }})
	a := e.create("a", nil)
	// Written under the cache: the cache learns of it through its watch,
	// so each list below may have to wait for it.
	for i, tc := range []struct {
		name string
		opts func(rv string) storage.ListOptions
	}{
		{"consistent", func(string) storage.ListOptions { return storage.ListOptions{} }},
		{"consistent paginated", func(string) storage.ListOptions {
			return storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 100}}
		}},
		{"not older than", func(rv string) storage.ListOptions {
			return storage.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
		}},
		{"at least N", func(rv string) storage.ListOptions { return storage.ListOptions{ResourceVersion: rv} }},
		{"at least N paginated", func(rv string) storage.ListOptions {
			return storage.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
				Predicate: storage.SelectionPredicate{Limit: 100}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &corev1.Pod{}
			name := fmt.Sprintf("b%d", i)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
			if err := e.under.Create(e.ctx, podKey(name), pod, out); err != nil {
				t.Fatalf("create: %v", err)
			}
			cached := e.c.stats.listsCached.Load()
			l := e.listFrom(t, e.c, tc.opts(out.ResourceVersion))
			if e.c.stats.listsCached.Load() != cached+1 {
				t.Fatalf("not served from the cache")
			}
			if len(l.Items) != i+2 || l.Items[len(l.Items)-1].Name != name {
				t.Fatalf("got %s, want a and b0..%s", pageOf(l), name)
			}
		})
	}
	// Exact at the current state, from the cache; at an older revision
	// with no snapshot, from the store.
	cur := e.listFrom(t, e.c, storage.ListOptions{})
	for _, rv := range []string{cur.ResourceVersion, a.ResourceVersion} {
		opts := storage.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
		got, want := e.listFrom(t, e.c, opts), e.listFrom(t, e.under, opts)
		if pageOf(got) != pageOf(want) {
			t.Fatalf("exact at %s:\n got %s\nwant %s", rv, pageOf(got), pageOf(want))
		}
	}
}

// TestListFallsBackToStore: a cache that cannot catch up in time, and a
// continue token whose snapshot has expired, are served by the store with
// the store's answers.
func TestListFallsBackToStore(t *testing.T) {
	var gate *gatedStore
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	e := newPodEnv(t, envOptions{
		cacher: func(c *Config) { c.ConsistentReadWait = 50 * time.Millisecond; c.Clock = clk },
		wrap: func(s storage.Interface) storage.Interface {
			gate = newGatedStore(s)
			t.Cleanup(func() { gate.cut(); gate.wg.Wait() })
			return gate
		},
	})
	for i := range 5 {
		e.create(fmt.Sprintf("p%d", i), nil)
	}
	first := e.listFrom(t, e.c, storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2}})

	// The snapshot of the first page expires (and the state changed since):
	// the next page is the store's.
	e.create("q", nil)
	e.waitRevision(rvOf(t, e.create("r", nil)))
	clk.Step(DefaultSnapshotTTL + time.Second)
	through := e.c.stats.listsDelegated.Load()
	next := storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2, Continue: first.Continue}}
	got, want := e.listFrom(t, e.c, next), e.listFrom(t, e.under, next)
	if pageOf(got) != pageOf(want) || e.c.stats.listsDelegated.Load() != through+1 {
		t.Fatalf("after expiry: got %s (%d through), want %s from the store", pageOf(got), e.c.stats.listsDelegated.Load()-through, pageOf(want))
	}

	// The cache stops hearing from the store: consistent and not-older-than
	// lists of the new revision fall back to the store after the wait.
	gate.pause()
	late := e.create("late", nil)
	for _, opts := range []storage.ListOptions{
		{},
		{Predicate: storage.SelectionPredicate{Limit: 10}},
		{ResourceVersion: late.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
	} {
		through := e.c.stats.listsDelegated.Load()
		l := e.listFrom(t, e.c, opts)
		if e.c.stats.listsDelegated.Load() != through+1 {
			t.Fatalf("list %+v: not served by the store", opts)
		}
		if n := len(l.Items); n != 8 || l.Items[0].Name != "late" {
			t.Fatalf("list %+v: got %s, want late, p0..p4, q and r", opts, pageOf(l))
		}
	}
}

// TestInterleavedPaginatedLists: two paginated lists started at different
// revisions, with creates, updates and deletes between their pages, each
// read its own snapshot: every page equals the store's answer.
func TestInterleavedPaginatedLists(t *testing.T) {
	e := newPodEnv(t, envOptions{cacher: func(c *Config) { c.ConsistentReadWait = waitTimeout }})
	for i := range 10 {
		e.create(fmt.Sprintf("p%02d", i), nil)
	}
	pred := storage.SelectionPredicate{Limit: 3}
	a := e.listFrom(t, e.c, storage.ListOptions{Predicate: pred})
	e.delete("p05")
	e.relabel("p07", map[string]string{"v": "2"})
	e.create("p03a", nil)
	b := e.listFrom(t, e.c, storage.ListOptions{Predicate: pred})
	if a.ResourceVersion == b.ResourceVersion {
		t.Fatalf("both lists at revision %s", a.ResourceVersion)
	}
	through := e.c.stats.listsDelegated.Load()
	pages := 0
	for conts := []string{a.Continue, b.Continue}; conts[0] != "" || conts[1] != ""; {
		for i, cont := range conts {
			if cont == "" {
				continue
			}
			// Writing on between pages: a create, a delete.
			e.create(fmt.Sprintf("x%02d", pages), nil)
			if pages > 0 {
				e.delete(fmt.Sprintf("x%02d", pages-1))
			}
			opts := storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 3, Continue: cont}}
			got, want := e.listFrom(t, e.c, opts), asCached(t, e.listFrom(t, e.under, opts))
			if pageOf(got) != pageOf(want) {
				t.Fatalf("list %d page after %q:\n got %s\nwant %s", i, cont, pageOf(got), pageOf(want))
			}
			conts[i] = got.Continue
			pages++
		}
	}
	if n := e.c.stats.listsDelegated.Load() - through; n != 0 {
		t.Fatalf("%d pages were served by the store, want none", n)
	}
}

// TestContinueTokenForms: the cache's pages carry the watch cache's form of
// token (start "/ns/p00\u0000" for the list of "/pods"), as kube-apiserver's
// cacher writes it; with StoreContinueTokens (a resource kube-apiserver
// serves from etcd, such as events) the store's ("ns/p00\u0000"). A token
// of the latest revision (-1, as a 410 hands out) is served from the cache
// as a consistent read, as kube's cacher does, from its key on.
func TestContinueTokenForms(t *testing.T) {
	for _, storeForm := range []bool{false, true} {
		t.Run(fmt.Sprintf("StoreContinueTokens=%v", storeForm), func(t *testing.T) {
			e := newPodEnv(t, envOptions{cacher: func(c *Config) {
				c.ConsistentReadWait = waitTimeout
				c.StoreContinueTokens = storeForm
			}})
			for i := range 5 {
				e.create(fmt.Sprintf("p%02d", i), nil)
			}
			start := func(l *corev1.PodList) (string, int64) {
				t.Helper()
				data, err := base64.RawURLEncoding.DecodeString(l.Continue)
				if err != nil {
					t.Fatal(err)
				}
				var tok struct {
					RV    int64  `json:"rv"`
					Start string `json:"start"`
				}
				if err := json.Unmarshal(data, &tok); err != nil {
					t.Fatal(err)
				}
				return tok.Start, tok.RV
			}
			want := func(name string) string {
				if storeForm {
					return "ns/" + name + "\x00"
				}
				return "/ns/" + name + "\x00"
			}
			through := e.c.stats.listsDelegated.Load()
			first := e.listFrom(t, e.c, storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2}})
			if s, _ := start(first); s != want("p01") {
				t.Fatalf("first page's start %q, want %q", s, want("p01"))
			}
			latest, err := storage.EncodeContinue("/pods/ns/p01\x00", "/pods/", -1)
			if err != nil {
				t.Fatal(err)
			}
			e.create("p01a", nil)
			rev := e.create("p01b", nil).ResourceVersion
			got := e.listFrom(t, e.c, storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2, Continue: latest}})
			if names := pageOf(got); got.ResourceVersion != rev || len(got.Items) != 2 || got.Items[0].Name != "p01a" || got.Items[1].Name != "p01b" {
				t.Fatalf("page of a token at the latest revision: %s, want p01a and p01b at %s", names, rev)
			}
			if s, rv := start(got); s != want("p01b") || strconv.FormatInt(rv, 10) != rev {
				t.Fatalf("its token: start %q at %d, want %q at %s", s, rv, want("p01b"), rev)
			}
			if n := e.c.stats.listsDelegated.Load() - through; n != 0 {
				t.Fatalf("%d lists were served by the store, want none", n)
			}
		})
	}
}
