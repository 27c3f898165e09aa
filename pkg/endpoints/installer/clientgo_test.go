package installer

import (
	"context"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
)

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed early")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

func TestClientGoConfigMaps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		protobuf bool
	}{{"json", false}, {"protobuf", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t)
			cs := ts.clientset(t, tc.protobuf)
			ctx := context.Background()
			cms := cs.CoreV1().ConfigMaps("ns1")

			w, err := cms.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()

			created, err := cms.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"app": "x"}},
				Data:       map[string]string{"k": "v"},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if created.Namespace != "ns1" || created.ResourceVersion == "" || created.UID == "" {
				t.Errorf("created = %+v, want namespace ns1, resourceVersion and uid set", created.ObjectMeta)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "a" {
				t.Errorf("got event %s %T, want ADDED a", ev.Type, ev.Object)
			}

			_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
			if !apierrors.IsAlreadyExists(err) {
				t.Errorf("second create: got %v, want AlreadyExists", err)
			}

			got, err := cms.Get(ctx, "a", metav1.GetOptions{})
			if err != nil || got.Data["k"] != "v" {
				t.Fatalf("get: got %v, %v; want data k=v", got, err)
			}
			if _, err := cms.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get missing: got %v, want NotFound", err)
			}

			got.Data["k"] = "v2"
			updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
			if err != nil || updated.Data["k"] != "v2" {
				t.Fatalf("update: got %v, %v", updated, err)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Modified {
				t.Errorf("got event %s, want MODIFIED", ev.Type)
			}
			// A stale resourceVersion conflicts.
			if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("stale update: got %v, want Conflict", err)
			}

			patched, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"m":"1"}}`), metav1.PatchOptions{})
			if err != nil || patched.Data["m"] != "1" || patched.Data["k"] != "v2" {
				t.Fatalf("merge patch: got %v, %v", patched, err)
			}
			nextEvent(t, w)
			patched, err = cms.Patch(ctx, "a", types.JSONPatchType, []byte(`[{"op":"add","path":"/data/j","value":"2"}]`), metav1.PatchOptions{})
			if err != nil || patched.Data["j"] != "2" {
				t.Fatalf("json patch: got %v, %v", patched, err)
			}
			nextEvent(t, w)
			patched, err = cms.Patch(ctx, "a", types.StrategicMergePatchType, []byte(`{"data":{"s":"3"}}`), metav1.PatchOptions{})
			if err != nil || patched.Data["s"] != "3" || patched.Data["j"] != "2" {
				t.Fatalf("strategic merge patch: got %v, %v", patched, err)
			}
			nextEvent(t, w)

			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			nextEvent(t, w)
			list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
			if err != nil || len(list.Items) != 1 || list.Items[0].Name != "a" {
				t.Fatalf("list app=x: got %v, %v; want [a]", list, err)
			}
			list, err = cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 2 {
				t.Fatalf("list all namespaces: got %v, %v; want 2 items", list, err)
			}

			if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Deleted {
				t.Errorf("got event %s, want DELETED", ev.Type)
			}
			if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("second delete: got %v, want NotFound", err)
			}
			if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				t.Fatalf("deletecollection: %v", err)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Deleted || ev.Object.(*corev1.ConfigMap).Name != "b" {
				t.Errorf("got event %s, want DELETED b", ev.Type)
			}
			list, err = cms.List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 0 {
				t.Errorf("list after deletecollection: got %v, %v; want empty", list, err)
			}
		})
	}
}

func TestClientGoWatchErrorAndExpired(t *testing.T) {
	ts := startServer(t)
	cs := ts.clientset(t, true)
	ctx := context.Background()
	// A start older than storage keeps: 200 and one ERROR event with the
	// 410 Status, then the end of the stream, as kube-apiserver v1.37.2
	// answers (its cacher and etcd watches alike; checked with curl,
	// session 20), not a 410 response.
	old, err := cs.CoreV1().ConfigMaps("ns1").Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatalf("watch from a compacted revision: %v, want a watch with an ERROR event", err)
	}
	ev := nextEvent(t, old)
	if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired || st.Message != "too old resource version: 1 (2)" {
		t.Errorf("watch from a compacted revision: got %s %#v, want ERROR 410 Expired", ev.Type, ev.Object)
	}
	if _, open := <-old.ResultChan(); open {
		t.Error("watch from a compacted revision: more than the ERROR event")
	}
	old.Stop()
	w, err := cs.CoreV1().ConfigMaps("ns1").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ts.cms.sendError(&apierrors.NewResourceExpired("too old resource version: 2 (9)").ErrStatus)
	ev = nextEvent(t, w)
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Reason != metav1.StatusReasonExpired {
		t.Errorf("got event %s %#v, want ERROR with an Expired Status", ev.Type, ev.Object)
	}
}

func TestMetadataClient(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	cs := ts.clientset(t, false)
	if _, err := cs.CoreV1().ConfigMaps("ns1").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"l": "1"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mc, err := metadata.NewForConfig(ts.config(false))
	if err != nil {
		t.Fatal(err)
	}
	res := mc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace("ns1")
	m, err := res.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || m.Name != "a" || m.Labels["l"] != "1" {
		t.Fatalf("metadata get: got %+v, %v", m, err)
	}
	l, err := res.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "a" {
		t.Fatalf("metadata list: got %+v, %v", l, err)
	}
}
