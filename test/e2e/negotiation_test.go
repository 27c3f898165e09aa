package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/yaml"
)

// TestProtobufClient runs the typed verbs with a client that sends and
// accepts only protobuf.
func TestProtobufClient(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		cfg := e.config()
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
		cs := mustClientset(t, cfg)
		t.Run("configmaps", func(t *testing.T) {
			e := &env{backend: e.backend, srv: e.srv, cs: cs}
			runEveryVerb(t, configMapOps(e, e.newNamespace(t)))
		})
		t.Run("secrets", func(t *testing.T) {
			e := &env{backend: e.backend, srv: e.srv, cs: cs}
			runEveryVerb(t, secretOps(e, e.newNamespace(t)))
		})
		t.Run("errors are Status in protobuf", func(t *testing.T) {
			_, err := cs.CoreV1().ConfigMaps("default").Get(context.Background(), "missing", metav1.GetOptions{})
			if !apierrors.IsNotFound(err) || err.Error() != `configmaps "missing" not found` {
				t.Errorf("got %v, want NotFound configmaps \"missing\" not found", err)
			}
		})
		t.Run("raw bytes", func(t *testing.T) {
			r := e.raw(t, http.MethodGet, "/api/v1/namespaces/default", nil, "Accept", "application/vnd.kubernetes.protobuf")
			if r.code != http.StatusOK || r.header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" || !bytes.HasPrefix(r.body, []byte("k8s\x00")) {
				t.Errorf("got %d %q %q, want 200 protobuf with the k8s magic", r.code, r.header.Get("Content-Type"), r.body[:min(len(r.body), 8)])
			}
		})
	})
}

type tableJSON struct {
	Kind              string `json:"kind"`
	APIVersion        string `json:"apiVersion"`
	ColumnDefinitions []struct {
		Name   string `json:"name"`
		Type   string `json:"type"`
		Format string `json:"format"`
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells  []any          `json:"cells"`
		Object map[string]any `json:"object"`
	} `json:"rows"`
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

func TestTableOutput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "two"}, Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": {2}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls"}, Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": {1}, "tls.key": {2}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		const accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
		for _, tc := range []struct {
			name, path   string
			columns      string // name:type:format,...
			firstCells   string // all but the age
			objectKind   string // of row.object; "" none
			objectAPIVer string
		}{
			{
				name: "configmap list", path: "/api/v1/namespaces/" + ns + "/configmaps",
				columns: "Name:string:name Data:string: Age:string:", firstCells: "[two 2]",
				objectKind: "PartialObjectMetadata", objectAPIVer: "meta.k8s.io/v1",
			},
			{
				name: "configmap", path: "/api/v1/namespaces/" + ns + "/configmaps/two",
				columns: "Name:string:name Data:string: Age:string:", firstCells: "[two 2]",
				objectKind: "PartialObjectMetadata", objectAPIVer: "meta.k8s.io/v1",
			},
			{
				name: "configmap with the object", path: "/api/v1/namespaces/" + ns + "/configmaps?includeObject=Object",
				columns: "Name:string:name Data:string: Age:string:", firstCells: "[two 2]",
				objectKind: "ConfigMap", objectAPIVer: "v1",
			},
			{
				name: "configmap without the object", path: "/api/v1/namespaces/" + ns + "/configmaps?includeObject=None",
				columns: "Name:string:name Data:string: Age:string:", firstCells: "[two 2]",
			},
			{
				name: "secret list", path: "/api/v1/namespaces/" + ns + "/secrets",
				columns: "Name:string:name Type:string: Data:string: Age:string:", firstCells: "[tls kubernetes.io/tls 2]",
				objectKind: "PartialObjectMetadata", objectAPIVer: "meta.k8s.io/v1",
			},
			{
				name: "namespace", path: "/api/v1/namespaces/" + ns,
				columns: "Name:string:name Status:string: Age:string:", firstCells: "[" + ns + " Active]",
				objectKind: "PartialObjectMetadata", objectAPIVer: "meta.k8s.io/v1",
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.raw(t, http.MethodGet, tc.path, nil, "Accept", accept)
				if r.code != http.StatusOK {
					t.Fatalf("got %d %s", r.code, r.body)
				}
				var tbl tableJSON
				if err := json.Unmarshal(r.body, &tbl); err != nil {
					t.Fatal(err)
				}
				if tbl.Kind != "Table" || tbl.APIVersion != "meta.k8s.io/v1" {
					t.Fatalf("got %s %s, want meta.k8s.io/v1 Table", tbl.APIVersion, tbl.Kind)
				}
				var cols []string
				for _, c := range tbl.ColumnDefinitions {
					cols = append(cols, c.Name+":"+c.Type+":"+c.Format)
				}
				if strings.Join(cols, " ") != tc.columns {
					t.Errorf("got columns %q, want %q", strings.Join(cols, " "), tc.columns)
				}
				if len(tbl.Rows) != 1 {
					t.Fatalf("got %d rows, want 1", len(tbl.Rows))
				}
				row := tbl.Rows[0]
				if len(row.Cells) != len(tbl.ColumnDefinitions) {
					t.Fatalf("got %d cells for %d columns", len(row.Cells), len(tbl.ColumnDefinitions))
				}
				if got := fmt.Sprint(row.Cells[:len(row.Cells)-1]); got != tc.firstCells {
					t.Errorf("got cells %s, want %s", got, tc.firstCells)
				}
				if age, _ := row.Cells[len(row.Cells)-1].(string); age == "" || !strings.HasSuffix(age, "s") {
					t.Errorf("got age %v, want like 0s", row.Cells[len(row.Cells)-1])
				}
				if tc.objectKind == "" {
					if row.Object != nil {
						t.Errorf("got row object %v, want none", row.Object)
					}
				} else if row.Object["kind"] != tc.objectKind || row.Object["apiVersion"] != tc.objectAPIVer {
					t.Errorf("got row object %v %v, want %s %s", row.Object["apiVersion"], row.Object["kind"], tc.objectAPIVer, tc.objectKind)
				}
			})
		}
		t.Run("Table only", func(t *testing.T) {
			r := e.raw(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps", nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
			if r.code != http.StatusOK || !strings.Contains(string(r.body), `"kind":"Table"`) {
				t.Errorf("got %d %.200s, want a Table", r.code, r.body)
			}
		})
		t.Run("unknown as", func(t *testing.T) {
			r := e.raw(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps", nil, "Accept", "application/json;as=Bogus;v=v1;g=meta.k8s.io")
			if r.code != http.StatusNotAcceptable {
				t.Errorf("got %d %.200s, want 406", r.code, r.body)
			}
		})
	})
}

func TestMetadataClient(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		for _, name := range []string{"a", "b"} {
			if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"n": name}}, Data: map[string]string{"secret": "x"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		mc, err := metadata.NewForConfig(e.config())
		if err != nil {
			t.Fatal(err)
		}
		res := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
		list, err := res.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list metadata: %v", err)
		}
		if list.ResourceVersion == "" {
			t.Errorf("got list without a resourceVersion")
		}
		if len(list.Items) != 2 || list.Items[0].Name != "a" || list.Items[1].Labels["n"] != "b" || list.Items[0].UID == "" {
			t.Errorf("got items %+v, want a and b with their metadata", list.Items)
		}
		one, err := res.Get(ctx, "b", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get metadata: %v", err)
		}
		if one.Name != "b" || one.Labels["n"] != "b" {
			t.Errorf("got %+v, want b's metadata", one.ObjectMeta)
		}
		w, err := res.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatalf("watch metadata: %v", err)
		}
		defer w.Stop()
		if _, err := e.cs.CoreV1().ConfigMaps(ns).Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		obj := expectEvent(t, w, watch.Modified, "a")
		if m, ok := obj.(*metav1.PartialObjectMetadata); !ok || m.Labels["x"] != "y" {
			t.Errorf("got %T %v, want PartialObjectMetadata with label x=y", obj, obj)
		}
		if err := res.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete through the metadata client: %v", err)
		}
		expectEvent(t, w, watch.Deleted, "b")
		// Raw: the kinds, and no data.
		r := e.raw(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/a", nil, "Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
		if r.code != http.StatusOK || strings.Contains(string(r.body), `"data"`) || !strings.Contains(string(r.body), `"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1"`) {
			t.Errorf("got %d %s, want a meta.k8s.io/v1 PartialObjectMetadata without data", r.code, r.body)
		}
		r = e.raw(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps", nil, "Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
		if r.code != http.StatusOK || strings.Contains(string(r.body), `"data"`) || !strings.Contains(string(r.body), `"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1"`) {
			t.Errorf("got %d %s, want a meta.k8s.io/v1 PartialObjectMetadataList without data", r.code, r.body)
		}
	})
}

func TestYAML(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.newNamespace(t)
		body := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  k: v\n")
		r := e.raw(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", body, "Content-Type", "application/yaml", "Accept", "application/yaml")
		if r.code != http.StatusCreated {
			t.Fatalf("create from YAML: got %d %q", r.code, r.body)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/yaml" {
			t.Errorf("got Content-Type %q, want application/yaml", ct)
		}
		var cm corev1.ConfigMap
		if err := yaml.UnmarshalStrict(r.body, &cm); err != nil {
			t.Fatalf("decode YAML %s: %v", r.body, err)
		}
		if cm.Kind != "ConfigMap" || cm.Name != "yml" || cm.Data["k"] != "v" || cm.UID == "" {
			t.Errorf("got %+v, want ConfigMap yml with data k=v", cm)
		}
		if !strings.HasPrefix(string(r.body), "apiVersion: v1\n") {
			t.Errorf("YAML does not start with apiVersion: %s", r.body)
		}
		r = e.raw(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/missing", nil, "Accept", "application/yaml")
		if r.code != http.StatusNotFound || r.header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(r.body), "reason: NotFound") {
			t.Errorf("missing in YAML: got %d %q %s, want a 404 Status in YAML", r.code, r.header.Get("Content-Type"), r.body)
		}
	})
}

// TestGzip: a large list asked with Accept-Encoding gzip comes compressed.
func TestGzip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		value := strings.Repeat("v", 4096)
		for i := range 40 {
			if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": value}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		r := e.raw(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps", nil, "Accept-Encoding", "gzip")
		if r.code != http.StatusOK || r.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("got %d Content-Encoding %q, want 200 gzip", r.code, r.header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		var list corev1.ConfigMapList
		if err := json.Unmarshal(plain, &list); err != nil || len(list.Items) != 40 {
			t.Errorf("decoded %d items (%v), want 40", len(list.Items), err)
		}
		// A small response is not compressed.
		r = e.raw(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/cm-0", nil, "Accept-Encoding", "gzip")
		if r.code != http.StatusOK || r.header.Get("Content-Encoding") != "" {
			t.Errorf("small get: got %d Content-Encoding %q, want 200 uncompressed", r.code, r.header.Get("Content-Encoding"))
		}
	})
}

// TestRestfulRouteChecks: kube-apiserver serves built-in resources, /api,
// /api/v1, /apis/<group>/<version> and /version through go-restful, which
// refuses a request whose Accept names none of the route's types (406), or
// a PATCH whose Content-Type is no patch type (415), with its own messages,
// before the handler runs. Custom resources, /apis and /apis/<group> are
// plain handlers with the negotiation's messages. Every expected answer is
// what kube-apiserver v1.37.2 answered to the same request.
func TestRestfulRouteChecks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.newNamespace(t)
		if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		const (
			objects = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
			streams = "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
			only    = "only the following media types are accepted: " + objects
		)
		cases := []struct {
			name, method, path, accept, contentType string
			code                                    int
			message                                 string
		}{
			{"item", "GET", "/api/v1/namespaces/" + ns + "/configmaps/cm", "application/cbor", "", 406, "406: Not Acceptable\n\nAvailable representations: " + objects},
			{"missing item: 406 first", "GET", "/api/v1/namespaces/" + ns + "/configmaps/nope", "text/html", "", 406, "406: Not Acceptable\n\nAvailable representations: " + objects},
			{"list adds the streams", "GET", "/api/v1/namespaces/" + ns + "/configmaps", "application/*", "", 406, "406: Not Acceptable\n\nAvailable representations: " + objects + ", " + streams},
			{"group-version root", "GET", "/apis/apps/v1", "text/html", "", 406, "406: Not Acceptable\n\nAvailable representations: " + objects},
			{"core root", "GET", "/api", "application/*", "", 406, "406: Not Acceptable\n\nAvailable representations: " + objects},
			{"version", "GET", "/version", "application/yaml", "", 406, "406: Not Acceptable\n\nAvailable representations: application/json"},
			{"group root is plain", "GET", "/apis/apps", "text/html", "", 406, only},
			{"parameters are cut", "GET", "/api/v1/namespaces/" + ns + "/configmaps/cm", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", "", 406, only},
			{"patch type", "PATCH", "/api/v1/namespaces/" + ns + "/configmaps/cm", "application/json", "application/json", 415, "415: Unsupported Media Type"},
			{"patch type before accept", "PATCH", "/api/v1/namespaces/" + ns + "/configmaps/cm", "text/html", "text/plain", 415, "415: Unsupported Media Type"},
			{"delete", "DELETE", "/api/v1/namespaces/" + ns + "/configmaps/cm?dryRun=All", "text/html", "", 406, "406: Not Acceptable\n\nAvailable representations: " + objects},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				headers := []string{"Accept", tc.accept}
				if tc.contentType != "" {
					headers = append(headers, "Content-Type", tc.contentType)
				}
				var body []byte
				if tc.method == "PATCH" {
					body = []byte("{}")
				}
				r := e.raw(t, tc.method, tc.path, body, headers...)
				// go-restful's errors are written negotiated: a Status in
				// YAML when YAML is asked for (the 406 of /version, which
				// produces JSON only), else JSON.
				wantType, unmarshal := "application/json", json.Unmarshal
				if tc.accept == "application/yaml" {
					wantType, unmarshal = "application/yaml", func(b []byte, v any) error { return yaml.UnmarshalStrict(b, v) }
				}
				if got := r.header.Get("Content-Type"); got != wantType {
					t.Errorf("Content-Type %q, want %q", got, wantType)
				}
				var s metav1.Status
				if err := unmarshal(r.body, &s); err != nil {
					t.Fatalf("%d %q: %v", r.code, r.body, err)
				}
				if r.code != tc.code || s.Message != tc.message {
					t.Errorf("got %d %q, want %d %q", r.code, s.Message, tc.code, tc.message)
				}
			})
		}
		// A wildcard and the default pass.
		for _, accept := range []string{"*/*;q=0.1", "", "text/html, application/json"} {
			if r := e.raw(t, "GET", "/api/v1/namespaces/"+ns+"/configmaps/cm", nil, "Accept", accept); r.code != http.StatusOK {
				t.Errorf("Accept %q: got %d %s", accept, r.code, r.body)
			}
		}
	})
}
