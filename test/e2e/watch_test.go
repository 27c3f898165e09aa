package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// collect reads events until want were read (failing after 10s).
func collect(t *testing.T, w watch.Interface, want int) []watch.Event {
	t.Helper()
	var out []watch.Event
	for len(out) < want {
		out = append(out, nextEvent(t, w))
	}
	return out
}

// describe renders events as "TYPE name" for comparisons.
func describe(t *testing.T, evs []watch.Event) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if ev.Type == watch.Bookmark || ev.Type == watch.Error {
			out = append(out, string(ev.Type))
			continue
		}
		out = append(out, string(ev.Type)+" "+objMeta(t, ev.Object).GetName())
	}
	return out
}

func TestWatchStartingPoints(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		cms := e.cs.CoreV1().ConfigMaps(ns)
		var rvs []string
		for _, name := range []string{"a", "b", "c"} {
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"name": name}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rvs = append(rvs, cm.ResourceVersion)
		}

		for _, tc := range []struct {
			name string
			opts metav1.ListOptions
			want []string
			// sorted: the initial ADDED events come in any order
			sorted int
		}{
			{name: "from a's resourceVersion", opts: metav1.ListOptions{ResourceVersion: rvs[0]}, want: []string{"ADDED b", "ADDED c", "MODIFIED b"}},
			{name: "from c's resourceVersion", opts: metav1.ListOptions{ResourceVersion: rvs[2]}, want: []string{"MODIFIED b"}},
			{name: "unset: state, then changes", opts: metav1.ListOptions{}, want: []string{"ADDED a", "ADDED b", "ADDED c", "MODIFIED b"}, sorted: 3},
			{name: "0: state, then changes", opts: metav1.ListOptions{ResourceVersion: "0"}, want: []string{"ADDED a", "ADDED b", "ADDED c", "MODIFIED b"}, sorted: 3},
			{name: "label selector", opts: metav1.ListOptions{ResourceVersion: rvs[0], LabelSelector: "name=b"}, want: []string{"ADDED b", "MODIFIED b"}},
			{name: "field selector on name", opts: metav1.ListOptions{ResourceVersion: rvs[0], FieldSelector: "metadata.name=c"}, want: []string{"ADDED c"}},
			{
				name: "watch-list", opts: metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true},
				want: []string{"ADDED a", "ADDED b", "ADDED c", "BOOKMARK", "MODIFIED b"}, sorted: 3,
			},
			{
				name: "watch-list not older than c", opts: metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, ResourceVersion: rvs[2], AllowWatchBookmarks: true},
				want: []string{"ADDED a", "ADDED b", "ADDED c", "BOOKMARK", "MODIFIED b"}, sorted: 3,
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w, err := cms.Watch(ctx, tc.opts)
				if err != nil {
					t.Fatalf("watch: %v", err)
				}
				defer w.Stop()
				var evs []watch.Event
				if len(tc.want) > 1 {
					evs = collect(t, w, len(tc.want)-1)
				}
				// Undo the previous case's change, then change b: the
				// patch value differs per case so it is always a change.
				if _, err := cms.Patch(ctx, "b", "application/merge-patch+json", []byte(`{"data":{"x":"`+tc.name+`"}}`), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
				evs = append(evs, collect(t, w, 1)...)
				got := describe(t, evs)
				slices.Sort(got[:tc.sorted])
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("got events %q, want %q", got, tc.want)
				}
				for _, ev := range evs {
					if ev.Type != watch.Bookmark {
						continue
					}
					m := objMeta(t, ev.Object)
					if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
						t.Errorf("bookmark annotations %v, want %s=true", m.GetAnnotations(), metav1.InitialEventsAnnotationKey)
					}
					rv, _ := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
					c, _ := strconv.ParseUint(rvs[2], 10, 64)
					if rv < c {
						t.Errorf("initial-events-end bookmark at %d, want >= %d", rv, c)
					}
				}
			})
		}
	})
}

func TestWatchOptionErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		coll := "/api/v1/namespaces/default/configmaps?watch=true&"
		for _, tc := range []struct {
			name, query, message string
		}{
			{
				name: "sendInitialEvents without resourceVersionMatch", query: "sendInitialEvents=true&allowWatchBookmarks=true",
				message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`,
			},
			{
				name: "resourceVersionMatch without sendInitialEvents", query: "resourceVersionMatch=NotOlderThan&resourceVersion=1",
				message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`,
			},
			{
				name: "Exact", query: "resourceVersionMatch=Exact&resourceVersion=1&sendInitialEvents=true",
				message: `ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`,
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.raw(t, http.MethodGet, coll+tc.query, nil)
				if r.code != http.StatusUnprocessableEntity {
					t.Fatalf("got %d %s, want 422", r.code, r.body)
				}
				if s := decodeStatus(t, r.body); s.Reason != metav1.StatusReasonInvalid || s.Message != tc.message {
					t.Errorf("got %s %q, want Invalid %q", s.Reason, s.Message, tc.message)
				}
			})
		}
	})
}

// TestRawWatchStream reads the JSON watch stream of both watch paths and
// checks the stream ends at timeoutSeconds.
func TestRawWatchStream(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		t.Parallel()
		ctx := context.Background()
		ns := e.newNamespace(t)
		cm, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{
			"/api/v1/namespaces/" + ns + "/configmaps?watch=true&timeoutSeconds=1&resourceVersion=" + cm.ResourceVersion,
			"/api/v1/watch/namespaces/" + ns + "/configmaps?timeoutSeconds=1&resourceVersion=" + cm.ResourceVersion,
			"/api/v1/watch/configmaps?timeoutSeconds=1&fieldSelector=metadata.namespace%3D" + ns + "&resourceVersion=" + cm.ResourceVersion,
		} {
			t.Run(path, func(t *testing.T) {
				began := time.Now()
				r := e.raw(t, http.MethodGet, path, nil)
				if r.code != http.StatusOK {
					t.Fatalf("got %d %s", r.code, r.body)
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("got Content-Type %q, want application/json", ct)
				}
				if took := time.Since(began); took > 10*time.Second {
					t.Errorf("watch with timeoutSeconds=1 took %v", took)
				}
				var got []string
				sc := bufio.NewScanner(bytes.NewReader(r.body))
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					var ev struct {
						Type   string `json:"type"`
						Object struct {
							Kind     string `json:"kind"`
							Metadata struct {
								Name string `json:"name"`
							} `json:"metadata"`
						} `json:"object"`
					}
					if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
						t.Fatalf("line %q: %v", sc.Text(), err)
					}
					got = append(got, ev.Type+" "+ev.Object.Kind+" "+ev.Object.Metadata.Name)
				}
				if fmt.Sprint(got) != "[ADDED ConfigMap b]" {
					t.Errorf("got events %q, want [ADDED ConfigMap b]", got)
				}
			})
		}
	})
}

// TestWatchProtobuf watches with a protobuf client.
func TestWatchProtobuf(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		cfg := e.config()
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cs := mustClientset(t, cfg)
		w, err := cs.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		obj := expectEvent(t, w, watch.Added, "s")
		if s := obj.(*corev1.Secret); string(s.Data["k"]) != "v" || s.StringData != nil {
			t.Errorf("got data %v stringData %v, want data k=v and no stringData", s.Data, s.StringData)
		}
		if err := cs.CoreV1().Secrets(ns).Delete(ctx, "s", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		expectEvent(t, w, watch.Deleted, "s")
	})
}
