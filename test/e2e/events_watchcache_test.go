package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestEventsWatchCacheDefault: on etcd, kube-apiserver v1.37.2 does not
// cache events by default (DefaultWatchCacheSizes: events 0), so a list
// of events with resourceVersion=0 and a limit is served by etcd and
// paged; --watch-cache-sizes=events#N caches them and the same list is
// served whole from the cache, limit ignored. Recorded on the reference
// (150 core/v1 events in one namespace, GET
// .../events?limit=5&resourceVersion=0): 5 items, remainingItemCount 145
// and the continue token {"v":"meta.k8s.io/v1","rv":<the list's
// resourceVersion>,"start":"e004\u0000"} without the flag, the same for
// events.k8s.io/v1; all 150 items and no continue token with
// --watch-cache-sizes=events#100.
func TestEventsWatchCacheDefault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		paged bool
	}{{"default", nil, true}, {"events#100", []string{"--watch-cache-sizes=events#100"}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd(), kapitest.WithFlags(tc.flags...))
			cs := kubernetes.NewForConfigOrDie(srv.Config)
			ctx := t.Context()
			const ns, n = "evt", 10
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if _, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
					ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("e%03d", i)},
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns},
					Reason:         "R", Message: fmt.Sprintf("m%d", i), Type: corev1.EventTypeNormal,
				}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for _, path := range []string{"/api/v1/namespaces/" + ns + "/events", "/apis/events.k8s.io/v1/namespaces/" + ns + "/events"} {
				var list struct {
					Metadata metav1.ListMeta   `json:"metadata"`
					Items    []json.RawMessage `json:"items"`
				}
				// The cache serves resourceVersion=0 from what it has
				// seen, which may lag the creates by a moment.
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					raw, err := cs.CoreV1().RESTClient().Get().AbsPath(path).Param("limit", "3").Param("resourceVersion", "0").DoRaw(ctx)
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					if err := json.Unmarshal(raw, &list); err != nil {
						t.Fatal(err)
					}
					if tc.paged || len(list.Items) >= n || time.Now().After(deadline) {
						break
					}
				}
				if !tc.paged {
					if len(list.Items) != n || list.Metadata.Continue != "" || list.Metadata.RemainingItemCount != nil {
						t.Errorf("%s: %d items, continue %q, remaining %v; want all %d (the cache ignores the limit)", path, len(list.Items), list.Metadata.Continue, list.Metadata.RemainingItemCount, n)
					}
					continue
				}
				if len(list.Items) != 3 || list.Metadata.RemainingItemCount == nil || *list.Metadata.RemainingItemCount != n-3 {
					t.Errorf("%s: %d items, remaining %v; want 3 and %d", path, len(list.Items), list.Metadata.RemainingItemCount, n-3)
				}
				token, err := base64.RawURLEncoding.DecodeString(list.Metadata.Continue)
				if err != nil {
					t.Fatalf("%s: continue %q: %v", path, list.Metadata.Continue, err)
				}
				want := fmt.Sprintf(`{"v":"meta.k8s.io/v1","rv":%s,"start":"e002\u0000"}`, list.Metadata.ResourceVersion)
				if string(token) != want {
					t.Errorf("%s: continue token %s, want %s", path, token, want)
				}
			}
		})
	}
}
