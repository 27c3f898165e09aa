package storagetest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapi-dev/kapi/pkg/storage"
)

func listCases() []testCase {
	return []testCase{
		{"Basic", testListBasic},
		{"Selectors", testListSelectors},
		{"ResourceVersion", testListResourceVersion},
		{"Pagination", testListPagination},
		{"PaginationWithSelector", testListPaginationSelector},
		{"PaginationWhileWriting", testListPaginationWhileWriting},
		{"InvalidContinue", testListInvalidContinue},
		{"InvalidArguments", testInvalidArguments},
	}
}

func testListBasic(t *testing.T, e *env) {
	// Namespaces "a" and "ab" check that a prefix ends at "/".
	for _, k := range []string{"a/2", "ab/1", "a/1", "b/1"} {
		ns, name, _ := cut(k)
		e.create(ns, name, nil, "")
	}
	rev := e.currentRevision()
	tests := []struct {
		key  string
		want []string
	}{
		{"/pods", []string{"a/1", "a/2", "ab/1", "b/1"}},
		{"/pods/", []string{"a/1", "a/2", "ab/1", "b/1"}},
		{"/pods/a", []string{"a/1", "a/2"}},
		{"/pods/c", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			l, err := e.list(tt.key, storage.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if got := names(l); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			if got := listRV(t, l); got != rev {
				t.Fatalf("list resourceVersion %d, want the current revision %d", got, rev)
			}
			if l.Continue != "" || l.RemainingItemCount != nil {
				t.Fatalf("unpaged list has continue %q remaining %v, want none", l.Continue, l.RemainingItemCount)
			}
			for _, p := range l.Items {
				if p.ResourceVersion == "" {
					t.Fatalf("item %s has no resourceVersion", p.Name)
				}
			}
		})
	}
	t.Run("single key", func(t *testing.T) {
		l := &corev1.PodList{}
		if err := e.pods.GetList(e.ctx, podKey("a", "1"), storage.ListOptions{}, l); err != nil {
			t.Fatalf("list: %v", err)
		}
		if got := names(l); !slices.Equal(got, []string{"a/1"}) {
			t.Fatalf("got %v, want [a/1]", got)
		}
	})
}

func cut(k string) (ns, name string, ok bool) {
	for i := range k {
		if k[i] == '/' {
			return k[:i], k[i+1:], true
		}
	}
	return "", k, false
}

func testListSelectors(t *testing.T, e *env) {
	e.create("ns", "a", map[string]string{"app": "web", "tier": "front"}, "node1")
	e.create("ns", "b", map[string]string{"app": "web", "tier": "back"}, "node2")
	e.create("ns", "c", map[string]string{"app": "db"}, "node1")
	e.create("other", "d", map[string]string{"app": "web"}, "node1")
	tests := []struct {
		name  string
		label string
		field string
		want  []string
	}{
		{"all", "", "", []string{"ns/a", "ns/b", "ns/c", "other/d"}},
		{"label", "app=web", "", []string{"ns/a", "ns/b", "other/d"}},
		{"label set", "tier in (front,back)", "", []string{"ns/a", "ns/b"}},
		{"label not", "app!=web", "", []string{"ns/c"}},
		{"field node", "", "spec.nodeName=node1", []string{"ns/a", "ns/c", "other/d"}},
		{"field namespace", "", "metadata.namespace=other", []string{"other/d"}},
		{"label and field", "app=web", "spec.nodeName=node1", []string{"ns/a", "other/d"}},
		{"nothing", "app=none", "", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := e.list("/pods", storage.ListOptions{Predicate: predicate(t, tt.label, tt.field)})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if got := names(l); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func predicate(t *testing.T, label, field string) storage.SelectionPredicate {
	t.Helper()
	p := storage.SelectionPredicate{GetAttrs: PodAttrs}
	if label != "" {
		sel, err := labels.Parse(label)
		if err != nil {
			t.Fatalf("parse label selector %q: %v", label, err)
		}
		p.Label = sel
	}
	if field != "" {
		sel, err := fields.ParseSelector(field)
		if err != nil {
			t.Fatalf("parse field selector %q: %v", field, err)
		}
		p.Field = sel
	}
	return p
}

func testListResourceVersion(t *testing.T, e *env) {
	a1 := rvOf(t, e.create("ns", "a", nil, ""))
	b2 := rvOf(t, e.create("ns", "b", nil, ""))
	a3 := rvOf(t, e.update("ns", "a", func(p *corev1.Pod) { p.Labels = map[string]string{"v": "3"} }))
	del4 := rvOf(t, e.delete("ns", "b"))
	c5 := rvOf(t, e.create("ns", "c", nil, ""))
	cur := e.currentRevision()
	exact := metav1.ResourceVersionMatchExact
	notOlder := metav1.ResourceVersionMatchNotOlderThan

	tests := []struct {
		name     string
		rv       string
		match    metav1.ResourceVersionMatch
		limit    int64
		wantCode int
		wantRV   uint64 // 0: any revision >= minRV
		minRV    uint64
		want     []string // names with resourceVersions, e.g. "a@1"
	}{
		{name: "consistent", rv: "", wantRV: cur, want: []string{fmt.Sprintf("a@%d", a3), fmt.Sprintf("c@%d", c5)}},
		{name: "any", rv: "0", minRV: 1},
		{name: "not older than", rv: rvString(b2), match: notOlder, minRV: b2},
		{name: "not older than current", rv: rvString(cur), match: notOlder, minRV: cur,
			want: []string{fmt.Sprintf("a@%d", a3), fmt.Sprintf("c@%d", c5)}},
		{name: "legacy not older than", rv: rvString(b2), minRV: b2},
		{name: "exact first", rv: rvString(a1), match: exact, wantRV: a1, want: []string{fmt.Sprintf("a@%d", a1)}},
		{name: "exact second", rv: rvString(b2), match: exact, wantRV: b2, want: []string{fmt.Sprintf("a@%d", a1), fmt.Sprintf("b@%d", b2)}},
		{name: "exact after delete", rv: rvString(del4), match: exact, wantRV: del4, want: []string{fmt.Sprintf("a@%d", a3)}},
		{name: "legacy paged is exact", rv: rvString(b2), limit: 10, wantRV: b2, want: []string{fmt.Sprintf("a@%d", a1), fmt.Sprintf("b@%d", b2)}},
		{name: "too large not older than", rv: rvString(cur + 100), match: notOlder, wantCode: storage.ErrCodeTooLargeResourceVersion},
		{name: "too large legacy", rv: rvString(cur + 100), wantCode: storage.ErrCodeTooLargeResourceVersion},
		{name: "too large exact", rv: rvString(cur + 100), match: exact, wantCode: storage.ErrCodeTooLargeResourceVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := e.list("/pods/ns", storage.ListOptions{
				ResourceVersion: tt.rv, ResourceVersionMatch: tt.match,
				Predicate: storage.SelectionPredicate{Limit: tt.limit},
			})
			if tt.wantCode != 0 {
				wantCode(t, "list", err, tt.wantCode)
				// Upstream's message names the revision asked for:
				// "Too large resource version: <rv>, current: <n>"
				// (k8s.io/apiserver/pkg/storage/errors.go,
				// NewTooLargeResourceVersionError).
				var se *storage.StorageError
				if errors.As(err, &se) && !strings.HasPrefix(se.Message, "Too large resource version: "+tt.rv+", current: ") {
					t.Errorf("message %q: want it to name the requested revision %s and the current one", se.Message, tt.rv)
				}
				return
			}
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			got := listRV(t, l)
			if tt.wantRV != 0 && got != tt.wantRV {
				t.Fatalf("list resourceVersion %d, want %d", got, tt.wantRV)
			}
			if got < tt.minRV {
				t.Fatalf("list resourceVersion %d, want >= %d", got, tt.minRV)
			}
			if tt.want != nil {
				var items []string
				for _, p := range l.Items {
					items = append(items, p.Name+"@"+p.ResourceVersion)
				}
				if !slices.Equal(items, tt.want) {
					t.Fatalf("got items %v, want %v", items, tt.want)
				}
			}
		})
	}
}

// continueToken is kube-apiserver's continue token, as the suite checks it.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

func decodeToken(t *testing.T, tok string) continueToken {
	t.Helper()
	data, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatalf("continue token %q is not unpadded base64url: %v", tok, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("continue token %q is not JSON: %v", data, err)
	}
	return c
}

func testListPagination(t *testing.T, e *env) {
	for i := range 25 {
		e.create("p", fmt.Sprintf("p%02d", i), nil, "")
	}
	e.create("q", "other", nil, "")
	var all []string
	var firstRV uint64
	cont := ""
	wantPages := []struct {
		items     int
		remaining int64 // -1: none
	}{{10, 15}, {10, 5}, {5, -1}}
	for i, want := range wantPages {
		l, err := e.list("/pods/p", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 10, Continue: cont}})
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		rv := listRV(t, l)
		if i == 0 {
			firstRV = rv
		} else if rv != firstRV {
			t.Fatalf("page %d resourceVersion %d, want the first page's %d", i, rv, firstRV)
		}
		if len(l.Items) != want.items {
			t.Fatalf("page %d: %d items, want %d", i, len(l.Items), want.items)
		}
		switch {
		case want.remaining < 0 && (l.Continue != "" || l.RemainingItemCount != nil):
			t.Fatalf("last page: continue %q remaining %v, want none", l.Continue, l.RemainingItemCount)
		case want.remaining >= 0 && (l.RemainingItemCount == nil || *l.RemainingItemCount != want.remaining):
			t.Fatalf("page %d: remainingItemCount %v, want %d", i, l.RemainingItemCount, want.remaining)
		case want.remaining >= 0:
			tok := decodeToken(t, l.Continue)
			start := l.Items[len(l.Items)-1].Name + "\x00"
			if c, ok := e.b.(CacheTokens); ok && c.CacheFormTokens() {
				start = "/" + start
			}
			if tok.APIVersion != "meta.k8s.io/v1" || tok.ResourceVersion != int64(firstRV) || tok.StartKey != start {
				t.Fatalf("page %d continue token %+v, want {v: meta.k8s.io/v1, rv: %d, start: %q}", i, tok, firstRV, start)
			}
		}
		all = append(all, names(l)...)
		cont = l.Continue
	}
	var want []string
	for i := range 25 {
		want = append(want, fmt.Sprintf("p/p%02d", i))
	}
	if !slices.Equal(all, want) {
		t.Fatalf("pages gave %v, want %v", all, want)
	}
}

func testListPaginationSelector(t *testing.T, e *env) {
	var want []string
	for i := range 20 {
		lbl := map[string]string{"even": fmt.Sprint(i%2 == 0)}
		e.create("p", fmt.Sprintf("p%02d", i), lbl, "")
		if i%2 == 0 {
			want = append(want, fmt.Sprintf("p/p%02d", i))
		}
	}
	var all []string
	cont := ""
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatalf("more than 10 pages for 10 items with limit 3")
		}
		l, err := e.list("/pods/p", storage.ListOptions{Predicate: storage.SelectionPredicate{
			Label: labels.SelectorFromSet(labels.Set{"even": "true"}), GetAttrs: PodAttrs, Limit: 3, Continue: cont,
		}})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if len(l.Items) > 3 {
			t.Fatalf("page %d: %d items, want at most 3", page, len(l.Items))
		}
		if l.RemainingItemCount != nil {
			t.Fatalf("page %d: remainingItemCount %d with a selector, want none", page, *l.RemainingItemCount)
		}
		all = append(all, names(l)...)
		if cont = l.Continue; cont == "" {
			break
		}
	}
	if !slices.Equal(all, want) {
		t.Fatalf("pages gave %v, want %v", all, want)
	}
}

// testListPaginationWhileWriting pages through a list while writes land
// between pages (deterministically) and concurrently: every page must come
// from the first page's snapshot.
func testListPaginationWhileWriting(t *testing.T, e *env) {
	for i := range 40 {
		e.create("p", fmt.Sprintf("p%02d", i), map[string]string{"gen": "0"}, "")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	writerErr := make(chan error, 1)
	wg.Go(func() { // background writer: creates and deletes outside the first page's view
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			key := podKey("p", fmt.Sprintf("w%04d", i))
			if err := e.pods.Create(e.ctx, key, newPod("p", fmt.Sprintf("w%04d", i), nil, ""), nil); err != nil {
				writerErr <- err
				return
			}
			if i%2 == 1 {
				if err := e.pods.Delete(e.ctx, podKey("p", fmt.Sprintf("w%04d", i-1)), &corev1.Pod{}, nil, noValidation, nil); err != nil {
					writerErr <- err
					return
				}
			}
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
	}()

	var got []string
	seen := map[string]bool{}
	var firstRV uint64
	cont := ""
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatalf("too many pages")
		}
		l, err := e.list("/pods/p", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 7, Continue: cont}})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		rv := listRV(t, l)
		if page == 0 {
			firstRV = rv
		} else if rv != firstRV {
			t.Fatalf("page %d resourceVersion %d, want the first page's %d", page, rv, firstRV)
		}
		for _, p := range l.Items {
			id := p.Name + "@" + p.ResourceVersion
			if seen[p.Name] {
				t.Fatalf("page %d: %s listed twice", page, p.Name)
			}
			seen[p.Name] = true
			got = append(got, id)
		}
		if cont = l.Continue; cont == "" {
			break
		}
		// Writes in the part of the list not yet returned: none may show.
		n := 7 * (page + 1)
		if n < 40 {
			e.update("p", fmt.Sprintf("p%02d", n), func(p *corev1.Pod) { p.Labels["gen"] = fmt.Sprint(page + 1) })
		}
		if n+1 < 40 {
			e.delete("p", fmt.Sprintf("p%02d", n+1))
		}
		e.create("p", fmt.Sprintf("p%02d-new", n), nil, "")
	}
	select {
	case err := <-writerErr:
		t.Fatalf("background writer: %v", err)
	default:
	}

	snap, err := e.list("/pods/p", storage.ListOptions{ResourceVersion: rvString(firstRV), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil {
		t.Fatalf("exact list at the first page's revision %d: %v", firstRV, err)
	}
	var want []string
	for _, p := range snap.Items {
		want = append(want, p.Name+"@"+p.ResourceVersion)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged list (%d items) differs from the snapshot at %d (%d items):\n got %v\nwant %v", len(got), firstRV, len(want), got, want)
	}
	for i := range 40 {
		if name := fmt.Sprintf("p%02d", i); !seen[name] {
			t.Fatalf("%s (in the snapshot) missing from the pages", name)
		}
	}
}

func testListInvalidContinue(t *testing.T, e *env) {
	for i := range 5 {
		e.create("p", fmt.Sprintf("p%d", i), nil, "")
	}
	first, err := e.list("/pods/p", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2}})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v, continue %q; want a continue token", err, first.Continue)
	}
	rv := listRV(t, first)
	enc := func(v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		return base64.RawURLEncoding.EncodeToString(data)
	}
	tests := []struct{ name, token string }{
		{"not base64", "%%%not-base64%%%"},
		{"not json", base64.RawURLEncoding.EncodeToString([]byte("{nope"))},
		{"unknown version", enc(continueToken{APIVersion: "v0", ResourceVersion: int64(rv), StartKey: "p/p1\x00"})},
		{"zero rv", enc(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: 0, StartKey: "p/p1\x00"})},
		{"empty start", enc(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: int64(rv)})},
		{"escaping start", enc(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: int64(rv), StartKey: "../secrets/x"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.list("/pods/p", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2, Continue: tt.token}})
			wantCode(t, "list", err, storage.ErrCodeInvalidContinue)
		})
	}
	t.Run("with resourceVersion", func(t *testing.T) {
		_, err := e.list("/pods/p", storage.ListOptions{ResourceVersion: rvString(rv), Predicate: storage.SelectionPredicate{Limit: 2, Continue: first.Continue}})
		wantCode(t, "continue with a resourceVersion", err, storage.ErrCodeInvalidArgument)
	})
	// kube-apiserver decodes the token before it refuses the
	// resourceVersion: a malformed token with one is a bad token.
	t.Run("malformed with resourceVersion", func(t *testing.T) {
		_, err := e.list("/pods/p", storage.ListOptions{ResourceVersion: rvString(rv), Predicate: storage.SelectionPredicate{Limit: 2, Continue: tests[1].token}})
		wantCode(t, "malformed continue with a resourceVersion", err, storage.ErrCodeInvalidContinue)
	})
	t.Run("valid", func(t *testing.T) {
		l, err := e.list("/pods/p", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2, Continue: first.Continue}})
		if err != nil || !slices.Equal(names(l), []string{"p/p2", "p/p3"}) {
			t.Fatalf("second page: %v %v, want [p/p2 p/p3]", err, names(l))
		}
	})
}

// testInvalidArguments: malformed or contradictory options of Get, GetList
// and Watch are ErrCodeInvalidArgument (400 at the REST edge), whether or
// not a cache could have answered.
func testInvalidArguments(t *testing.T, e *env) {
	for i := range 3 {
		e.create("p", fmt.Sprintf("p%d", i), nil, "")
	}
	first, err := e.list("/pods/p", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 1}})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v, continue %q; want a continue token", err, first.Continue)
	}
	rv := rvString(listRV(t, first))
	page := func(cont string) storage.SelectionPredicate {
		return storage.SelectionPredicate{Limit: 1, Continue: cont}
	}
	lists := []struct {
		name string
		opts storage.ListOptions
	}{
		{"rv not a number", storage.ListOptions{ResourceVersion: "abc"}},
		{"rv negative", storage.ListOptions{ResourceVersion: "-1"}},
		{"rv with spaces", storage.ListOptions{ResourceVersion: " 1"}},
		{"unknown match", storage.ListOptions{ResourceVersion: rv, ResourceVersionMatch: "Newest"}},
		{"unknown match without rv", storage.ListOptions{ResourceVersionMatch: "Newest"}},
		{"unknown match rv 0", storage.ListOptions{ResourceVersion: "0", ResourceVersionMatch: "Newest"}},
		{"continue with rv", storage.ListOptions{ResourceVersion: rv, Predicate: page(first.Continue)}},
		{"continue with rv exact", storage.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact, Predicate: page(first.Continue)}},
		{"continue with rv not older than", storage.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Predicate: page(first.Continue)}},
	}
	for _, tt := range lists {
		t.Run("list/"+tt.name, func(t *testing.T) {
			_, err := e.list("/pods/p", tt.opts)
			wantCode(t, "list", err, storage.ErrCodeInvalidArgument)
		})
	}
	t.Run("list/continue with rv 0 is allowed", func(t *testing.T) {
		l, err := e.list("/pods/p", storage.ListOptions{ResourceVersion: "0", Predicate: page(first.Continue)})
		if err != nil || !slices.Equal(names(l), []string{"p/p1"}) {
			t.Fatalf("second page with rv 0: %v %v, want [p/p1]", err, names(l))
		}
	})
	for _, bad := range []string{"abc", "-1", "1.5"} {
		t.Run("get/rv "+bad, func(t *testing.T) {
			err := e.pods.Get(e.ctx, podKey("p", "p0"), storage.GetOptions{ResourceVersion: bad}, &corev1.Pod{})
			wantCode(t, "get", err, storage.ErrCodeInvalidArgument)
		})
		t.Run("watch/rv "+bad, func(t *testing.T) {
			w, err := e.pods.Watch(e.ctx, "/pods/p", storage.ListOptions{ResourceVersion: bad, Recursive: true, Predicate: storage.SelectionPredicate{GetAttrs: PodAttrs}})
			if err == nil {
				w.Stop()
			}
			wantCode(t, "watch", err, storage.ErrCodeInvalidArgument)
		})
	}
}
