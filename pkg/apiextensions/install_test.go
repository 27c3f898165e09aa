package apiextensions

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
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

func widget(apiVersion, kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

// TestCustomResourcesEndToEnd creates a CRD, waits for it to be
// established, exercises every verb on its custom resources with the
// dynamic client, then deletes the CRD: its resources go, its routes and
// discovery too, and its watches end.
func TestCustomResourcesEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name      string
		scope     apiextensionsv1.ResourceScope
		namespace string
	}{
		{"namespaced", apiextensionsv1.NamespaceScoped, "ns1"},
		{"cluster", apiextensionsv1.ClusterScoped, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, serverOptions{})
			ctx := context.Background()
			crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
			crd, err := crds.Create(ctx, crdtest.NewCRD("example.com", "widgets", "Widget", tc.scope), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create CRD: %v", err)
			}
			if got := crd.Status.StoredVersions; len(got) != 1 || got[0] != "v1" {
				t.Errorf("got storedVersions %v, want [v1]", got)
			}
			crd = waitEstablished(t, ts.crdClient(t), crd.Name)
			if c := findCondition(crd, apiextensionsv1.NamesAccepted); c == nil || c.Reason != "NoConflicts" {
				t.Errorf("got NamesAccepted %+v, want reason NoConflicts", c)
			}
			if c := findCondition(crd, apiextensionsv1.Established); c.Reason != "InitialNamesAccepted" {
				t.Errorf("got Established reason %q, want InitialNamesAccepted", c.Reason)
			}
			if crd.Status.AcceptedNames.Kind != "Widget" || crd.Status.AcceptedNames.ListKind != "WidgetList" || crd.Status.AcceptedNames.Singular != "widget" {
				t.Errorf("got acceptedNames %+v", crd.Status.AcceptedNames)
			}

			res := gvr("example.com", "v1", "widgets")
			var ri dynamic.ResourceInterface = ts.dynamic(t).Resource(res)
			if tc.namespace != "" {
				ri = ts.dynamic(t).Resource(res).Namespace(tc.namespace)
			}
			w, err := ri.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()

			created, err := ri.Create(ctx, widget("example.com/v1", "Widget", "w1", map[string]any{"name": "a", "size": int64(3)}), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if created.GetNamespace() != tc.namespace || created.GetUID() == "" || created.GetGeneration() != 1 {
				t.Errorf("created %v, want namespace %q, a uid, generation 1", created.Object, tc.namespace)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Added {
				t.Errorf("got event %s, want ADDED", ev.Type)
			}

			// Schema validation: 422 with field paths.
			_, err = ri.Create(ctx, widget("example.com/v1", "Widget", "bad", map[string]any{"size": int64(11), "color": "green"}), metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("invalid create: got %v, want 422 Invalid", err)
			}
			for _, want := range []string{"spec.name: Required value", "spec.size: Invalid value", `spec.color: Unsupported value: "green"`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("got %q, want it to contain %q", err, want)
				}
			}

			got, err := ri.Get(ctx, "w1", metav1.GetOptions{})
			if err != nil || got.GetAPIVersion() != "example.com/v1" || got.GetKind() != "Widget" {
				t.Fatalf("get: %v %v", got, err)
			}
			list, err := ri.List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 1 || list.GetKind() != "WidgetList" {
				t.Fatalf("list: %v %v", list, err)
			}

			// Update: spec change bumps generation; status is ignored.
			got.Object["spec"] = map[string]any{"name": "a", "size": int64(4)}
			got.Object["status"] = map[string]any{"ready": true}
			updated, err := ri.Update(ctx, got, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if updated.GetGeneration() != 2 || updated.Object["status"] != nil {
				t.Errorf("updated %v, want generation 2 and no status", updated.Object)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Modified {
				t.Errorf("got event %s, want MODIFIED", ev.Type)
			}

			// Status subresource: only status changes, no generation bump.
			updated.Object["status"] = map[string]any{"ready": true}
			updated.Object["spec"] = map[string]any{"name": "changed"}
			st, err := ri.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update status: %v", err)
			}
			if ready, _, _ := unstructured.NestedBool(st.Object, "status", "ready"); !ready || st.GetGeneration() != 2 {
				t.Errorf("status update gave %v, want status.ready and generation 2", st.Object)
			}
			if name, _, _ := unstructured.NestedString(st.Object, "spec", "name"); name != "a" {
				t.Errorf("status update changed spec.name to %q", name)
			}
			nextEvent(t, w)

			// Merge patch works; strategic merge patch is 415.
			patched, err := ri.Patch(ctx, "w1", types.MergePatchType, []byte(`{"spec":{"color":"red"}}`), metav1.PatchOptions{})
			if err != nil {
				t.Fatalf("merge patch: %v", err)
			}
			if color, _, _ := unstructured.NestedString(patched.Object, "spec", "color"); color != "red" {
				t.Errorf("patched spec.color = %q, want red", color)
			}
			nextEvent(t, w)
			_, err = ri.Patch(ctx, "w1", types.StrategicMergePatchType, []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{})
			if !apierrors.IsUnsupportedMediaType(err) {
				t.Errorf("strategic merge patch: got %v, want 415", err)
			}

			// Discovery lists the resource with its names.
			rl, err := ts.discovery(t).ServerResourcesForGroupVersion("example.com/v1")
			if err != nil {
				t.Fatalf("discovery: %v", err)
			}
			var found bool
			for _, r := range rl.APIResources {
				if r.Name == "widgets" {
					found = true
					if r.Kind != "Widget" || r.Namespaced != (tc.namespace != "") || r.SingularName != "widget" || len(r.ShortNames) != 1 || r.ShortNames[0] != "wi" {
						t.Errorf("got discovery %+v", r)
					}
				}
			}
			if !found {
				t.Errorf("discovery of example.com/v1 lacks widgets: %+v", rl.APIResources)
			}
			groups, err := ts.discovery(t).ServerGroups()
			if err != nil {
				t.Fatalf("server groups: %v", err)
			}
			if !hasGroup(groups, "example.com") || !hasGroup(groups, "apiextensions.k8s.io") {
				t.Errorf("groups %+v lack example.com or apiextensions.k8s.io", groups)
			}
			if code := ts.getCode(t, "/apis/example.com"); code != http.StatusOK {
				t.Errorf("GET /apis/example.com: got %d, want 200", code)
			}
			if code := ts.getCode(t, "/openapi/v3/apis/example.com/v1"); code != http.StatusOK {
				t.Errorf("GET /openapi/v3/apis/example.com/v1: got %d, want 200", code)
			}

			// A second watch, to see it end with the CRD.
			w2, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: patched.GetResourceVersion()})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w2.Stop()

			if err := ri.Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Deleted {
				t.Errorf("got event %s, want DELETED", ev.Type)
			}
			if _, err := ri.Get(ctx, "w1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get deleted: got %v, want NotFound", err)
			}

			// Delete the CRD with a resource left: the resource goes, then
			// the CRD, its routes and its discovery.
			if _, err := ri.Create(ctx, widget("example.com/v1", "Widget", "w2", map[string]any{"name": "b"}), metav1.CreateOptions{}); err != nil {
				t.Fatalf("create w2: %v", err)
			}
			if err := crds.Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete CRD: %v", err)
			}
			eventually(t, waitTimeout, "CRD gone", func() bool {
				_, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			})
			if _, err := ri.Get(ctx, "w2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get after CRD deletion: got %v, want NotFound", err)
			}
			if code := ts.getCode(t, "/apis/example.com/v1"); code != http.StatusNotFound {
				t.Errorf("GET /apis/example.com/v1 after deletion: got %d, want 404", code)
			}
			if _, err := ts.discovery(t).ServerResourcesForGroupVersion("example.com/v1"); !apierrors.IsNotFound(err) {
				t.Errorf("discovery after deletion: got %v, want NotFound", err)
			}
			drain(t, w2)

			// The data is gone too: a new CRD of the same name starts empty.
			if _, err := crds.Create(ctx, crdtest.NewCRD("example.com", "widgets", "Widget", tc.scope), metav1.CreateOptions{}); err != nil {
				t.Fatalf("re-create CRD: %v", err)
			}
			waitEstablished(t, ts.crdClient(t), crd.Name)
			list, err = ri.List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 0 {
				t.Errorf("list after re-creation: got %v items, %v; want 0", len(list.Items), err)
			}
		})
	}
}

// drain reads w until it closes, failing if it does not within 10s.
func drain(t *testing.T, w watch.Interface) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("watch did not end within 10s of the CRD's deletion")
		}
	}
}

func hasGroup(l *metav1.APIGroupList, name string) bool {
	for _, g := range l.Groups {
		if g.Name == name {
			return true
		}
	}
	return false
}

func (ts *testServer) getCode(t *testing.T, path string) int {
	t.Helper()
	resp, err := ts.srv.Client().Get(ts.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// do sends one request; headers alternate name, value.
func (ts *testServer) do(t *testing.T, method, path, body string, headers ...string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := ts.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestWireFormats checks the media types custom resources are served in
// and the Table output from additionalPrinterColumns.
func TestWireFormats(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	ri := serveWidgets(t, ts)
	if _, err := ri.Create(ctx, widget("example.com/v1", "Widget", "w", map[string]any{"name": "x", "size": int64(5)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const item = "/apis/example.com/v1/namespaces/ns/widgets/w"
	cases := []struct {
		name, method, path, body string
		headers                  []string
		wantCode                 int
		wantContent              string
	}{
		{name: "json", method: "GET", path: item, headers: []string{"Accept", "application/json"}, wantCode: 200, wantContent: `"kind":"Widget"`},
		{name: "yaml", method: "GET", path: item, headers: []string{"Accept", "application/yaml"}, wantCode: 200, wantContent: "kind: Widget"},
		{name: "protobuf only", method: "GET", path: item, headers: []string{"Accept", "application/vnd.kubernetes.protobuf"}, wantCode: 406},
		{name: "protobuf body", method: "POST", path: "/apis/example.com/v1/namespaces/ns/widgets", body: "x",
			headers: []string{"Content-Type", "application/vnd.kubernetes.protobuf"}, wantCode: 415},
		{name: "yaml body", method: "POST", path: "/apis/example.com/v1/namespaces/ns/widgets",
			body:    "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: yml\nspec:\n  name: yml\n",
			headers: []string{"Content-Type", "application/yaml"}, wantCode: 201, wantContent: `"name":"yml"`},
		{name: "wrong kind", method: "POST", path: "/apis/example.com/v1/namespaces/ns/widgets",
			body:    `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"z"},"spec":{"name":"z"}}`,
			headers: []string{"Content-Type", "application/json"}, wantCode: 422, wantContent: "kind: Invalid value"},
		{name: "wrong version", method: "POST", path: "/apis/example.com/v1/namespaces/ns/widgets",
			body:    `{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"z"},"spec":{"name":"z"}}`,
			headers: []string{"Content-Type", "application/json"}, wantCode: 400},
		{name: "table", method: "GET", path: "/apis/example.com/v1/namespaces/ns/widgets",
			headers: []string{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}, wantCode: 200, wantContent: `"name":"Size","type":"integer"`},
		{name: "unknown version", method: "GET", path: "/apis/example.com/v2", wantCode: 404},
		{name: "cluster path of namespaced", method: "GET", path: "/apis/example.com/v1/widgets/w", wantCode: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := ts.do(t, tc.method, tc.path, tc.body, tc.headers...)
			if code != tc.wantCode {
				t.Fatalf("got %d, want %d: %s", code, tc.wantCode, body)
			}
			if tc.wantContent != "" && !strings.Contains(string(body), tc.wantContent) {
				t.Errorf("got body %s, want it to contain %s", body, tc.wantContent)
			}
		})
	}

	// The table row: name and size.
	_, body := ts.do(t, "GET", item, "", "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 2 || table.Rows[0].Cells[0] != "w" || table.Rows[0].Cells[1] != float64(5) {
		t.Errorf("got table rows %+v, want [w 5]", table.Rows)
	}
}
