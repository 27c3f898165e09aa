package etcd3

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapi-dev/kapi/pkg/storage"
)

func names(l *corev1.ConfigMapList) []string {
	out := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		out = append(out, it.Name)
	}
	return out
}

// seed creates n ConfigMaps named c00..c<n-1>, even ones labelled even=true.
func seed(t testing.TB, s *Store, n int) uint64 {
	t.Helper()
	var rv uint64
	for i := range n {
		l := map[string]string{"even": strconv.FormatBool(i%2 == 0)}
		rv = rvOf(t, mustCreate(t, s, newCM(fmt.Sprintf("c%02d", i), l, nil)))
	}
	return rv
}

func TestListPaging(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	seedRV := seed(t, s, 25)

	// Page through with writes in between: every page is read at the first
	// page's revision.
	var got []string
	var listRV string
	cont := ""
	for page := 0; ; page++ {
		l := &corev1.ConfigMapList{}
		err := s.GetList(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 10, Continue: cont}}, l)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if page == 0 {
			listRV = l.ResourceVersion
			if listRV != strconv.FormatUint(seedRV, 10) {
				t.Errorf("got list rv %s, want %d", listRV, seedRV)
			}
		} else if l.ResourceVersion != listRV {
			t.Errorf("page %d: got rv %s, want the first page's %s", page, l.ResourceVersion, listRV)
		}
		got = append(got, names(l)...)
		mustCreate(t, s, newCM(fmt.Sprintf("z%02d", page), nil, nil))
		if l.Continue == "" {
			if l.RemainingItemCount != nil {
				t.Errorf("last page has remainingItemCount %d", *l.RemainingItemCount)
			}
			break
		}
		if want := int64(25 - len(got)); l.RemainingItemCount == nil || *l.RemainingItemCount != want {
			t.Errorf("page %d: got remainingItemCount %v, want %d", page, l.RemainingItemCount, want)
		}
		cont = l.Continue
	}
	if len(got) != 25 || got[0] != "c00" || got[24] != "c24" {
		t.Errorf("got %d items %v, want c00..c24", len(got), got)
	}
}

func TestListFiltered(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	seed(t, s, 30)
	sel := labels.SelectorFromSet(labels.Set{"even": "true"})
	var got []string
	cont := ""
	for {
		l := &corev1.ConfigMapList{}
		err := s.GetList(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true,
			Predicate: storage.SelectionPredicate{Label: sel, Limit: 4, Continue: cont}}, l)
		if err != nil {
			t.Fatal(err)
		}
		if l.RemainingItemCount != nil {
			t.Errorf("got remainingItemCount with a filtering predicate")
		}
		if len(l.Items) > 4 || (l.Continue != "" && len(l.Items) != 4) {
			t.Errorf("got %d items on a page (continue %v), want 4, or at most 4 on the last page", len(l.Items), l.Continue != "")
		}
		got = append(got, names(l)...)
		if l.Continue == "" {
			break
		}
		cont = l.Continue
	}
	if len(got) != 15 {
		t.Errorf("got %d matching items %v, want 15", len(got), got)
	}
}

func TestListResourceVersions(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	rv1 := seed(t, s, 3)
	mustCreate(t, s, newCM("later", nil, nil))
	cur, _ := s.CurrentRevision(ctx)
	tests := []struct {
		name     string
		opts     storage.ListOptions
		wantN    int
		wantRV   uint64
		wantCode int
	}{
		{name: "consistent", opts: storage.ListOptions{}, wantN: 4, wantRV: cur},
		{name: "rv 0", opts: storage.ListOptions{ResourceVersion: "0"}, wantN: 4, wantRV: cur},
		{name: "not older than", opts: storage.ListOptions{ResourceVersion: strconv.FormatUint(rv1, 10), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, wantN: 4, wantRV: cur},
		{name: "exact", opts: storage.ListOptions{ResourceVersion: strconv.FormatUint(rv1, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, wantN: 3, wantRV: rv1},
		{name: "legacy paged is exact", opts: storage.ListOptions{ResourceVersion: strconv.FormatUint(rv1, 10), Predicate: storage.SelectionPredicate{Limit: 10}}, wantN: 3, wantRV: rv1},
		{name: "too large", opts: storage.ListOptions{ResourceVersion: strconv.FormatUint(cur+10, 10)}, wantCode: storage.ErrCodeTooLargeResourceVersion},
		{name: "exact future", opts: storage.ListOptions{ResourceVersion: strconv.FormatUint(cur+10, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, wantCode: storage.ErrCodeTooLargeResourceVersion},
		{name: "bad continue", opts: storage.ListOptions{Predicate: storage.SelectionPredicate{Continue: "!!!"}}, wantCode: storage.ErrCodeInvalidContinue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Recursive = true
			l := &corev1.ConfigMapList{}
			err := s.GetList(ctx, "/configmaps/ns", tt.opts, l)
			if tt.wantCode != 0 {
				wantCode(t, err, tt.wantCode)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Items) != tt.wantN || l.ResourceVersion != strconv.FormatUint(tt.wantRV, 10) {
				t.Errorf("got %d items at rv %s, want %d at %d", len(l.Items), l.ResourceVersion, tt.wantN, tt.wantRV)
			}
		})
	}

	t.Run("non-recursive", func(t *testing.T) {
		l := &corev1.ConfigMapList{}
		if err := s.GetList(ctx, cmKey("c01"), storage.ListOptions{}, l); err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 1 || l.Items[0].Name != "c01" || l.Items[0].ResourceVersion == "" {
			t.Errorf("got %v, want c01 with its resourceVersion", names(l))
		}
	})
	t.Run("prefix is a directory", func(t *testing.T) {
		mustCreate(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns2", Name: "x"}})
		l := &corev1.ConfigMapList{}
		if err := s.GetList(ctx, "/configmaps/n", storage.ListOptions{Recursive: true}, l); err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 0 || l.Items == nil {
			t.Errorf("got %v (nil: %v) for prefix /configmaps/n, want an empty non-nil list", names(l), l.Items == nil)
		}
	})
}

func TestCompaction(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	rv1 := seed(t, s, 6)
	l := &corev1.ConfigMapList{}
	if err := s.GetList(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2}}, l); err != nil {
		t.Fatal(err)
	}
	cont := l.Continue
	mustCreate(t, s, newCM("c99", nil, nil))
	cur, _ := s.CurrentRevision(ctx)
	if err := s.Compact(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, rv1); err != nil {
		t.Errorf("compacting below the compacted revision: got %v, want nil", err)
	}
	wantCode(t, s.Compact(ctx, cur+100), storage.ErrCodeTooLargeResourceVersion)

	exact := storage.ListOptions{Recursive: true, ResourceVersion: strconv.FormatUint(rv1, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	err := s.GetList(ctx, "/configmaps/ns", exact, &corev1.ConfigMapList{})
	wantCode(t, err, storage.ErrCodeExpired)

	err = s.GetList(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2, Continue: cont}}, &corev1.ConfigMapList{})
	wantCode(t, err, storage.ErrCodeContinueExpired)
	if !storage.IsExpired(err) {
		t.Errorf("IsExpired(%v) = false", err)
	}
	var ce *storage.ContinueExpiredError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a fresh continue token", err)
	}
	// The fresh token resumes after the first page, at the latest revision.
	l = &corev1.ConfigMapList{}
	if err := s.GetList(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 100, Continue: ce.Continue}}, l); err != nil {
		t.Fatal(err)
	}
	if got := names(l); len(got) != 5 || got[0] != "c02" || got[4] != "c99" {
		t.Errorf("got %v after the fresh token, want c02..c05 and c99", got)
	}
}
