package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

func TestLabelAndFieldSelectors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		other := e.newNamespace(t)
		for _, cm := range []struct {
			ns, name string
			labels   map[string]string
		}{
			{ns, "a", map[string]string{"app": "web", "tier": "front"}},
			{ns, "b", map[string]string{"app": "web", "tier": "back"}},
			{ns, "c", map[string]string{"app": "db"}},
			{ns, "d", nil},
			{other, "a", map[string]string{"app": "web"}},
		} {
			if _, err := e.cs.CoreV1().ConfigMaps(cm.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.name, Labels: cm.labels}}, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create %s/%s: %v", cm.ns, cm.name, err)
			}
		}
		for _, s := range []struct {
			name string
			typ  corev1.SecretType
			data map[string][]byte
		}{
			{"opaque", corev1.SecretTypeOpaque, nil},
			{"tls", corev1.SecretTypeTLS, map[string][]byte{corev1.TLSCertKey: []byte("c"), corev1.TLSPrivateKeyKey: []byte("k")}},
			{"basic", corev1.SecretTypeBasicAuth, map[string][]byte{corev1.BasicAuthUsernameKey: []byte("u")}},
		} {
			if _, err := e.cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s.name}, Type: s.typ, Data: s.data}, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create secret %s: %v", s.name, err)
			}
		}

		for _, tc := range []struct {
			name         string
			namespace    string // "" lists across namespaces
			label, field string
			want         []string // namespace/name
			secrets      bool
		}{
			{name: "equality", namespace: ns, label: "app=web", want: []string{ns + "/a", ns + "/b"}},
			{name: "inequality", namespace: ns, label: "app!=web", want: []string{ns + "/c", ns + "/d"}},
			{name: "two requirements", namespace: ns, label: "app=web,tier=back", want: []string{ns + "/b"}},
			{name: "in", namespace: ns, label: "app in (db,web)", want: []string{ns + "/a", ns + "/b", ns + "/c"}},
			{name: "notin", namespace: ns, label: "tier notin (front)", want: []string{ns + "/b", ns + "/c", ns + "/d"}},
			{name: "exists", namespace: ns, label: "tier", want: []string{ns + "/a", ns + "/b"}},
			{name: "does not exist", namespace: ns, label: "!app", want: []string{ns + "/d"}},
			{name: "metadata.name", namespace: ns, field: "metadata.name=c", want: []string{ns + "/c"}},
			{name: "metadata.name !=", namespace: ns, field: "metadata.name!=c", want: []string{ns + "/a", ns + "/b", ns + "/d"}},
			{name: "metadata.name across namespaces", field: "metadata.name=a", want: []string{ns + "/a", other + "/a"}},
			{name: "metadata.namespace", field: "metadata.namespace=" + other, want: []string{other + "/a"}},
			{name: "label and field", label: "app=web", field: "metadata.namespace=" + ns, want: []string{ns + "/a", ns + "/b"}},
			{name: "secret type", namespace: ns, field: "type=kubernetes.io/tls", want: []string{ns + "/tls"}, secrets: true},
			{name: "secret type !=", namespace: ns, field: "type!=" + string(corev1.SecretTypeOpaque), want: []string{ns + "/basic", ns + "/tls"}, secrets: true},
			{name: "secret type and name", namespace: ns, field: "type=Opaque,metadata.name=opaque", want: []string{ns + "/opaque"}, secrets: true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				opts := metav1.ListOptions{LabelSelector: tc.label, FieldSelector: tc.field}
				var got []string
				if tc.secrets {
					l, err := e.cs.CoreV1().Secrets(tc.namespace).List(ctx, opts)
					if err != nil {
						t.Fatalf("list: %v", err)
					}
					for _, it := range l.Items {
						got = append(got, it.Namespace+"/"+it.Name)
					}
				} else {
					l, err := e.cs.CoreV1().ConfigMaps(tc.namespace).List(ctx, opts)
					if err != nil {
						t.Fatalf("list: %v", err)
					}
					for _, it := range l.Items {
						if tc.namespace == "" && it.Namespace != ns && it.Namespace != other {
							continue // other tests' objects
						}
						got = append(got, it.Namespace+"/"+it.Name)
					}
				}
				slices.Sort(got)
				slices.Sort(tc.want)
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			})
		}
	})
}

// TestPaginationWhileWriting pages through a namespace with limit and
// continue while other objects are created, updated and deleted: every
// object present at the first page shows up exactly once, none created
// later does, and every page carries the first page's resourceVersion.
func TestPaginationWhileWriting(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		cms := e.cs.CoreV1().ConfigMaps(ns)
		const n = 23
		want := map[string]bool{}
		for i := range n {
			name := fmt.Sprintf("cm-%02d", i)
			want[name] = true
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]int{}
		var listRV, cont string
		pages := 0
		for {
			page, err := cms.List(ctx, metav1.ListOptions{Limit: 5, Continue: cont})
			if err != nil {
				t.Fatalf("page %d: %v", pages, err)
			}
			pages++
			if pages == 1 {
				listRV = page.ResourceVersion
			} else if page.ResourceVersion != listRV {
				t.Errorf("page %d has resourceVersion %s, want the first page's %s", pages, page.ResourceVersion, listRV)
			}
			if len(page.Items) > 5 {
				t.Errorf("page %d has %d items, want at most 5", pages, len(page.Items))
			}
			for _, it := range page.Items {
				seen[it.Name]++
			}
			// Writes between pages: a new object, a change and a deletion
			// of an object not yet listed (the snapshot still has it).
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("new-%d", pages)}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if late := fmt.Sprintf("cm-%02d", n-pages); seen[late] == 0 {
				if err := cms.Delete(ctx, late, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := cms.Patch(ctx, "cm-00", "application/merge-patch+json", []byte(fmt.Sprintf(`{"data":{"page":"%d"}}`, pages)), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			cont = page.Continue
			if cont == "" {
				if page.RemainingItemCount != nil {
					t.Errorf("last page has remainingItemCount %d, want none", *page.RemainingItemCount)
				}
				break
			}
			if page.RemainingItemCount == nil || int(*page.RemainingItemCount) != n-len(seen) {
				t.Errorf("page %d: got remainingItemCount %v, want %d", pages, page.RemainingItemCount, n-len(seen))
			}
		}
		if pages != 5 {
			t.Errorf("got %d pages, want 5", pages)
		}
		for name := range want {
			if seen[name] != 1 {
				t.Errorf("%s listed %d times, want once", name, seen[name])
			}
		}
		for name := range seen {
			if !want[name] {
				t.Errorf("%s listed, but created after the first page", name)
			}
		}
	})
}

func TestListResourceVersionSemantics(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		cms := e.cs.CoreV1().ConfigMaps(ns)
		a, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		b, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvB, _ := strconv.ParseUint(b.ResourceVersion, 10, 64)

		for _, tc := range []struct {
			name      string
			opts      metav1.ListOptions
			wantNames []string
			// wantRV: "exact" the requested one; "atLeastB" not older than b.
			wantRV string
		}{
			{name: "most recent", opts: metav1.ListOptions{}, wantNames: []string{"b"}, wantRV: "atLeastB"},
			{name: "any (0)", opts: metav1.ListOptions{ResourceVersion: "0"}, wantRV: "any"},
			{name: "not older than b", opts: metav1.ListOptions{ResourceVersion: b.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, wantNames: []string{"b"}, wantRV: "atLeastB"},
			{name: "not older than b, legacy", opts: metav1.ListOptions{ResourceVersion: b.ResourceVersion}, wantNames: []string{"b"}, wantRV: "atLeastB"},
			{name: "exact a", opts: metav1.ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, wantNames: []string{"a"}, wantRV: "exact"},
			{name: "exact b", opts: metav1.ListOptions{ResourceVersion: b.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, wantNames: []string{"b"}, wantRV: "exact"},
			{name: "exact a, paged", opts: metav1.ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 1}, wantNames: []string{"a"}, wantRV: "exact"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				l, err := cms.List(ctx, tc.opts)
				if err != nil {
					t.Fatalf("list: %v", err)
				}
				var names []string
				for _, it := range l.Items {
					names = append(names, it.Name)
				}
				if tc.wantNames != nil && fmt.Sprint(names) != fmt.Sprint(tc.wantNames) {
					t.Errorf("got items %v, want %v", names, tc.wantNames)
				}
				got, err := strconv.ParseUint(l.ResourceVersion, 10, 64)
				if err != nil {
					t.Fatalf("list resourceVersion %q: %v", l.ResourceVersion, err)
				}
				switch tc.wantRV {
				case "exact":
					if l.ResourceVersion != tc.opts.ResourceVersion {
						t.Errorf("got list resourceVersion %s, want %s", l.ResourceVersion, tc.opts.ResourceVersion)
					}
				case "atLeastB":
					if got < rvB {
						t.Errorf("got list resourceVersion %d, want >= %d", got, rvB)
					}
				}
			})
		}

		for _, tc := range []struct {
			name    string
			query   string
			code    int
			reason  metav1.StatusReason
			message string
		}{
			{
				name: "match without resourceVersion", query: "resourceVersionMatch=NotOlderThan", code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
				message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`,
			},
			{
				name: "exact 0", query: "resourceVersion=0&resourceVersionMatch=Exact", code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
				message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`,
			},
			{
				name: "unknown match", query: "resourceVersion=1&resourceVersionMatch=Newest", code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
				message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""`,
			},
			{
				name: "not a number", query: "resourceVersion=abc", code: http.StatusBadRequest, reason: metav1.StatusReasonBadRequest,
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.raw(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps?"+tc.query, nil)
				if r.code != tc.code {
					t.Fatalf("got %d %s, want %d", r.code, r.body, tc.code)
				}
				s := decodeStatus(t, r.body)
				if s.Reason != tc.reason || (tc.message != "" && s.Message != tc.message) {
					t.Errorf("got %s %q, want %s %q", s.Reason, s.Message, tc.reason, tc.message)
				}
			})
		}
	})
}

// TestListTooNewResourceVersion: a list not older than a revision the
// server has not reached fails as kube-apiserver does: 504 Timeout, "Too
// large resource version", retry after 1s. Raw, because client-go retries
// it 10 times.
func TestListTooNewResourceVersion(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		t.Parallel()
		ctx := context.Background()
		ns := e.newNamespace(t)
		l, err := e.cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rv, _ := strconv.ParseUint(l.ResourceVersion, 10, 64)
		future := strconv.FormatUint(rv+1_000_000, 10)
		began := time.Now()
		r := e.raw(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps?resourceVersionMatch=NotOlderThan&resourceVersion="+future, nil)
		took := time.Since(began)
		if r.code != http.StatusGatewayTimeout {
			t.Fatalf("got %d %s, want 504", r.code, r.body)
		}
		if got := r.header.Get("Retry-After"); got != "1" {
			t.Errorf("got Retry-After %q, want 1", got)
		}
		s := decodeStatus(t, r.body)
		// current: the server's revision, which other tests move on.
		prefix := "Timeout: Too large resource version: " + future + ", current: "
		current, err := strconv.ParseUint(strings.TrimPrefix(s.Message, prefix), 10, 64)
		if !strings.HasPrefix(s.Message, prefix) || err != nil || current < rv {
			t.Errorf("got message %q, want %q and a revision >= %d", s.Message, prefix, rv)
		}
		want := metav1.Status{
			Status:  metav1.StatusFailure,
			Message: s.Message,
			Reason:  metav1.StatusReasonTimeout,
			Details: &metav1.StatusDetails{
				Causes:            []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}},
				RetryAfterSeconds: 1,
			},
			Code: http.StatusGatewayTimeout,
		}
		if diff := cmp.Diff(want, s); diff != "" {
			t.Errorf("Status differs from kube-apiserver's (-want +got):\n%s", diff)
		}
		// kube-apiserver's watch cache waits 3s for the revision; kapi's
		// asks storage for its current revision and, when storage is
		// behind too, answers at once (no wait can help).
		if took > 10*time.Second {
			t.Errorf("answered after %v, want at most about 3s", took)
		}
	})
}

// TestListAndWatchAfterCompaction: on embedded etcd compacting every
// 200ms, a list at an exact compacted revision fails with 410 Expired; so
// does a watch from it once the server restarted (before, the watch cache
// may still serve it from memory, as kube-apiserver's does).
func TestListAndWatchAfterCompaction(t *testing.T) {
	dir := t.TempDir()
	compactFast := kapitest.WithOptions(func(o *kapitest.Options) { o.CompactionInterval = 200 * time.Millisecond })
	start := func() (*kapitest.Server, kubernetes.Interface) {
		srv, err := kapitest.StartE(dir, slog.New(slog.DiscardHandler), kapitest.WithEmbeddedEtcd(), compactFast)
		if err != nil {
			t.Fatalf("start kapi: %v", err)
		}
		cfg := rest.CopyConfig(srv.Config)
		cfg.QPS = -1
		return srv, kubernetes.NewForConfigOrDie(cfg)
	}
	srv, cs := start()
	ctx := context.Background()
	old, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "old"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Writes after it, so that compaction passes old's revision.
	i := 0
	eventually(t, 20*time.Second, "old revision compacted", func() error {
		i++
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n-%d", i)}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		_, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if err == nil {
			return fmt.Errorf("list at exact %s still served", old.ResourceVersion)
		}
		if !apierrors.IsResourceExpired(err) {
			t.Fatalf("list at compacted %s: got %v, want 410 Expired", old.ResourceVersion, err)
		}
		if code := err.(apierrors.APIStatus).Status().Code; code != http.StatusGone {
			t.Fatalf("got code %d, want 410", code)
		}
		return nil
	})
	if err := srv.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	srv, cs = start()
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion})
	if err != nil {
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Fatalf("watch from compacted %s: got %v, want 410", old.ResourceVersion, err)
		}
		return
	}
	defer w.Stop()
	ev := nextEvent(t, w)
	s, ok := ev.Object.(*metav1.Status)
	if ev.Type != "ERROR" || !ok || s.Code != http.StatusGone || s.Reason != metav1.StatusReasonExpired {
		t.Fatalf("watch from compacted %s: got %s %+v, want ERROR 410 Expired", old.ResourceVersion, ev.Type, ev.Object)
	}
}
