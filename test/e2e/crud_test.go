package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// typedClient is what the typed clients of configmaps and secrets have in
// common.
type typedClient[T runtime.Object, L runtime.Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error
}

// kindOps builds and reads the objects of one typed client.
type kindOps[T runtime.Object, L runtime.Object] struct {
	client  typedClient[T, L]
	newObj  func(name string, labels map[string]string, data map[string]string) T
	getData func(T) map[string]string
	setData func(T, string, string)
	items   func(L) []T
	// patchValue is how a value is written in a patch body's data.
	patchValue func(string) string
}

func configMapOps(e *env, ns string) kindOps[*corev1.ConfigMap, *corev1.ConfigMapList] {
	return kindOps[*corev1.ConfigMap, *corev1.ConfigMapList]{
		client: e.cs.CoreV1().ConfigMaps(ns),
		newObj: func(name string, labels, data map[string]string) *corev1.ConfigMap {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: data}
		},
		getData: func(cm *corev1.ConfigMap) map[string]string { return cm.Data },
		setData: func(cm *corev1.ConfigMap, k, v string) {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[k] = v
		},
		items: func(l *corev1.ConfigMapList) []*corev1.ConfigMap {
			out := make([]*corev1.ConfigMap, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out
		},
		patchValue: func(v string) string { return v },
	}
}

func secretOps(e *env, ns string) kindOps[*corev1.Secret, *corev1.SecretList] {
	return kindOps[*corev1.Secret, *corev1.SecretList]{
		client: e.cs.CoreV1().Secrets(ns),
		newObj: func(name string, labels, data map[string]string) *corev1.Secret {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string][]byte{}}
			for k, v := range data {
				s.Data[k] = []byte(v)
			}
			return s
		},
		getData: func(s *corev1.Secret) map[string]string {
			out := map[string]string{}
			for k, v := range s.Data {
				out[k] = string(v)
			}
			return out
		},
		setData: func(s *corev1.Secret, k, v string) {
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			s.Data[k] = []byte(v)
		},
		items: func(l *corev1.SecretList) []*corev1.Secret {
			out := make([]*corev1.Secret, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out
		},
		patchValue: func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) },
	}
}

func TestTypedClientEveryVerb(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		t.Run("configmaps", func(t *testing.T) { runEveryVerb(t, configMapOps(e, e.newNamespace(t))) })
		t.Run("secrets", func(t *testing.T) { runEveryVerb(t, secretOps(e, e.newNamespace(t))) })
	})
}

// nextEvent returns the next event of w, failing after 10s.
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

// expectEvent reads the next event and checks its type and object name.
func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) runtime.Object {
	t.Helper()
	ev := nextEvent(t, w)
	if ev.Type != typ {
		t.Fatalf("got event %s %v, want %s %s", ev.Type, ev.Object, typ, name)
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		t.Fatalf("event object %T: %v", ev.Object, err)
	}
	if m.GetName() != name {
		t.Fatalf("got event %s for %q, want %s for %q", ev.Type, m.GetName(), typ, name)
	}
	return ev.Object
}

func objMeta(t *testing.T, obj runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatalf("%T: %v", obj, err)
	}
	return m
}

func runEveryVerb[T runtime.Object, L runtime.Object](t *testing.T, k kindOps[T, L]) {
	ctx := context.Background()
	c := k.client

	initial, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	listRV := objListRV(t, initial)
	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: listRV})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	// create
	created, err := c.Create(ctx, k.newObj("a", map[string]string{"app": "x"}, map[string]string{"k": "v"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	cm := objMeta(t, created)
	if cm.GetUID() == "" || cm.GetResourceVersion() == "" || cm.GetCreationTimestamp().Time.IsZero() {
		t.Errorf("created metadata %+v: want uid, resourceVersion and creationTimestamp set", cm)
	}
	expectEvent(t, w, watch.Added, "a")
	if _, err := c.Create(ctx, k.newObj("a", nil, nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: got %v, want AlreadyExists", err)
	}

	// get
	got, err := c.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if d := k.getData(got); d["k"] != "v" {
		t.Errorf("get: got data %v, want k=v", d)
	}
	if gm := objMeta(t, got); gm.GetResourceVersion() != cm.GetResourceVersion() || gm.GetUID() != cm.GetUID() {
		t.Errorf("get: got rv %s uid %s, want %s %s", gm.GetResourceVersion(), gm.GetUID(), cm.GetResourceVersion(), cm.GetUID())
	}

	// update, then a stale update
	stale := got.DeepCopyObject().(T)
	k.setData(got, "k", "v2")
	updated, err := c.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if d := k.getData(updated); d["k"] != "v2" {
		t.Errorf("update: got data %v, want k=v2", d)
	}
	if objMeta(t, updated).GetResourceVersion() == cm.GetResourceVersion() {
		t.Errorf("update kept resourceVersion %s", cm.GetResourceVersion())
	}
	expectEvent(t, w, watch.Modified, "a")
	k.setData(stale, "k", "stale")
	if _, err := c.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: got %v, want Conflict", err)
	}

	// patch, three types
	for _, p := range []struct {
		typ  types.PatchType
		body string
		key  string
	}{
		{types.JSONPatchType, fmt.Sprintf(`[{"op":"add","path":"/data/j","value":%q}]`, k.patchValue("1")), "j"},
		{types.MergePatchType, fmt.Sprintf(`{"data":{"m":%q}}`, k.patchValue("1")), "m"},
		{types.StrategicMergePatchType, fmt.Sprintf(`{"data":{"s":%q}}`, k.patchValue("1")), "s"},
	} {
		patched, err := c.Patch(ctx, "a", p.typ, []byte(p.body), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("%s patch: %v", p.typ, err)
		}
		if d := k.getData(patched); d[p.key] != "1" || d["k"] != "v2" {
			t.Errorf("%s patch: got data %v, want %s=1 and k=v2 kept", p.typ, d, p.key)
		}
		expectEvent(t, w, watch.Modified, "a")
	}
	if _, err := c.Patch(ctx, "missing", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("patch missing: got %v, want NotFound", err)
	}

	// list with a label selector
	if _, err := c.Create(ctx, k.newObj("b", map[string]string{"app": "y"}, nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create b: %v", err)
	}
	expectEvent(t, w, watch.Added, "b")
	list, err := c.List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil {
		t.Fatalf("list app=x: %v", err)
	}
	if names := itemNames(t, k.items(list)); fmt.Sprint(names) != "[a]" {
		t.Errorf("list app=x: got %v, want [a]", names)
	}

	// delete, then delete again
	if err := c.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	expectEvent(t, w, watch.Deleted, "a")
	if err := c.Delete(ctx, "a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: got %v, want NotFound", err)
	}
	if _, err := c.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: got %v, want NotFound", err)
	}

	// deletecollection by selector leaves the others
	if _, err := c.Create(ctx, k.newObj("c", map[string]string{"app": "z"}, nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create c: %v", err)
	}
	expectEvent(t, w, watch.Added, "c")
	if err := c.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=y"}); err != nil {
		t.Fatalf("deletecollection app=y: %v", err)
	}
	expectEvent(t, w, watch.Deleted, "b")
	list, err = c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if names := itemNames(t, k.items(list)); fmt.Sprint(names) != "[c]" {
		t.Errorf("list after deletecollection app=y: got %v, want [c]", names)
	}
	if err := c.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("deletecollection: %v", err)
	}
	expectEvent(t, w, watch.Deleted, "c")
}

func itemNames[T runtime.Object](t *testing.T, items []T) []string {
	t.Helper()
	names := make([]string, 0, len(items))
	for _, it := range items {
		names = append(names, objMeta(t, it).GetName())
	}
	return names
}

func objListRV(t *testing.T, list runtime.Object) string {
	t.Helper()
	lm, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatalf("%T: %v", list, err)
	}
	if lm.GetResourceVersion() == "" {
		t.Fatalf("list %T has no resourceVersion", list)
	}
	return lm.GetResourceVersion()
}

// TestRawEveryVerb drives each verb over plain HTTP and checks the status
// code and the kind of what comes back, as kube-apiserver answers.
func TestRawEveryVerb(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, res := range []struct {
			resource, kind string
			value          func(string) string
		}{
			{"configmaps", "ConfigMap", func(v string) string { return v }},
			{"secrets", "Secret", func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }},
		} {
			t.Run(res.resource, func(t *testing.T) {
				ns := e.newNamespace(t)
				coll := "/api/v1/namespaces/" + ns + "/" + res.resource
				item := coll + "/a"
				body := func(rv string) []byte {
					meta := `"name":"a","labels":{"app":"x"}`
					if rv != "" {
						meta += `,"resourceVersion":"` + rv + `"`
					}
					return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":%q,"metadata":{%s},"data":{"k":%q}}`, res.kind, meta, res.value("v")))
				}
				var rv string
				for _, tc := range []struct {
					name        string
					method      string
					path        string
					body        func() []byte
					contentType string
					wantCode    int
					wantKind    string
					check       func(t *testing.T, obj map[string]any)
				}{
					{name: "create", method: http.MethodPost, path: coll, body: func() []byte { return body("") }, wantCode: http.StatusCreated, wantKind: res.kind,
						check: func(t *testing.T, obj map[string]any) { rv = jsonPath(obj, "metadata", "resourceVersion").(string) }},
					{name: "get", method: http.MethodGet, path: item, wantCode: http.StatusOK, wantKind: res.kind},
					{name: "list", method: http.MethodGet, path: coll, wantCode: http.StatusOK, wantKind: res.kind + "List",
						check: func(t *testing.T, obj map[string]any) {
							if items := obj["items"].([]any); len(items) != 1 {
								t.Errorf("got %d items, want 1", len(items))
							}
						}},
					{name: "list all namespaces", method: http.MethodGet, path: "/api/v1/" + res.resource + "?fieldSelector=metadata.namespace%3D" + ns, wantCode: http.StatusOK, wantKind: res.kind + "List"},
					{name: "update", method: http.MethodPut, path: item, body: func() []byte { return body(rv) }, wantCode: http.StatusOK, wantKind: res.kind},
					{name: "json patch", method: http.MethodPatch, path: item, contentType: "application/json-patch+json",
						body: func() []byte {
							return []byte(fmt.Sprintf(`[{"op":"add","path":"/data/j","value":%q}]`, res.value("1")))
						}, wantCode: http.StatusOK, wantKind: res.kind},
					{name: "merge patch", method: http.MethodPatch, path: item, contentType: "application/merge-patch+json",
						body: func() []byte { return []byte(fmt.Sprintf(`{"data":{"m":%q}}`, res.value("1"))) }, wantCode: http.StatusOK, wantKind: res.kind},
					{name: "strategic merge patch", method: http.MethodPatch, path: item, contentType: "application/strategic-merge-patch+json",
						body: func() []byte { return []byte(fmt.Sprintf(`{"data":{"s":%q}}`, res.value("1"))) }, wantCode: http.StatusOK, wantKind: res.kind,
						check: func(t *testing.T, obj map[string]any) {
							data := obj["data"].(map[string]any)
							for _, key := range []string{"k", "j", "m", "s"} {
								if _, ok := data[key]; !ok {
									t.Errorf("data %v lacks %q after three patches", data, key)
								}
							}
						}},
					{name: "delete", method: http.MethodDelete, path: item, wantCode: http.StatusOK, wantKind: "Status",
						check: func(t *testing.T, obj map[string]any) {
							if obj["status"] != "Success" || jsonPath(obj, "details", "name") != "a" || jsonPath(obj, "details", "kind") != res.resource {
								t.Errorf("got %v, want a Success Status with details name a, kind %s", obj, res.resource)
							}
						}},
					{name: "get deleted", method: http.MethodGet, path: item, wantCode: http.StatusNotFound, wantKind: "Status"},
					{name: "create again", method: http.MethodPost, path: coll, body: func() []byte { return body("") }, wantCode: http.StatusCreated, wantKind: res.kind},
					{name: "deletecollection", method: http.MethodDelete, path: coll, wantCode: http.StatusOK, wantKind: res.kind + "List",
						check: func(t *testing.T, obj map[string]any) {
							if items, _ := obj["items"].([]any); len(items) != 1 {
								t.Errorf("deletecollection returned %d items, want the 1 deleted", len(items))
							}
						}},
					{name: "list empty", method: http.MethodGet, path: coll, wantCode: http.StatusOK, wantKind: res.kind + "List",
						check: func(t *testing.T, obj map[string]any) {
							if items, _ := obj["items"].([]any); len(items) != 0 {
								t.Errorf("got %d items, want 0", len(items))
							}
						}},
				} {
					var b []byte
					if tc.body != nil {
						b = tc.body()
					}
					var headers []string
					if tc.contentType != "" {
						headers = []string{"Content-Type", tc.contentType}
					}
					resp := e.raw(t, tc.method, tc.path, b, headers...)
					if resp.code != tc.wantCode {
						t.Fatalf("%s %s %s: got %d %s, want %d", tc.name, tc.method, tc.path, resp.code, resp.body, tc.wantCode)
					}
					var obj map[string]any
					if err := json.Unmarshal(resp.body, &obj); err != nil {
						t.Fatalf("%s: decode %s: %v", tc.name, resp.body, err)
					}
					if obj["kind"] != tc.wantKind || obj["apiVersion"] != "v1" {
						t.Errorf("%s: got %v %v, want v1 %s", tc.name, obj["apiVersion"], obj["kind"], tc.wantKind)
					}
					if tc.check != nil {
						tc.check(t, obj)
					}
				}
			})
		}
	})
}

// jsonPath walks nested JSON objects.
func jsonPath(obj map[string]any, keys ...string) any {
	var cur any = obj
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}
