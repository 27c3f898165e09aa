package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// TestListFromCachedEncodings: lists of custom resources written from the
// watch cache's kept encodings (etcd backend) are byte for byte what the
// same list read from storage and encoded whole is: a list read again at
// its resourceVersion (Exact) after a write, which the cache no longer
// holds (no paginated list recorded a snapshot yet) and etcd answers, has
// the same bytes (identity and gzip). A write is seen by the next list (an
// updated item's bytes change, a deleted one is gone, the others keep
// theirs), and pages (limit/continue, with remainingItemCount) hold the
// same items as the full list.
func TestListFromCachedEncodings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		gvr := schema.GroupVersionResource{Group: "cached.e2e.kapi.dev", Version: "v1", Resource: "cachedthings"}
		preserve := true
		createCRD(t, e, &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: gvr.Resource + "." + gvr.Group},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: gvr.Group, Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: gvr.Resource, Singular: "cachedthing", Kind: "CachedThing", ListKind: "CachedThingList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
			},
		})
		dyn := dynamic.NewForConfigOrDie(e.config()).Resource(gvr).Namespace(ns)
		const n = 400 // ~200 KiB of JSON: over the gzip threshold
		for i := range n {
			_, err := dyn.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": gvr.GroupVersion().String(), "kind": "CachedThing",
				"metadata": map[string]any{"name": fmt.Sprintf("c%04d", i), "labels": map[string]any{"half": fmt.Sprint(i % 2)}},
				"spec":     map[string]any{"i": int64(i), "f": 0.25, "html": "<a>&</a>", "u": "ünï \u2028", "pad": "padding padding padding padding padding padding padding padding padding"},
			}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create %d: %v", i, err)
			}
		}
		path := "/apis/" + gvr.Group + "/v1/namespaces/" + ns + "/" + gvr.Resource
		get := func(gzip bool, query url.Values) []byte {
			t.Helper()
			return rawListGet(t, e.config(), path, query, gzip)
		}
		// Wait for the cache to hold every object (a consistent list is
		// served once it caught up; the creates' answers came first).
		full := get(false, nil)
		var l1 listBody
		decodeList(t, full, &l1)
		if len(l1.Items) != n {
			t.Fatalf("listed %d items, want %d", len(l1.Items), n)
		}
		// Another consistent list, gzipped: the same bytes but for the
		// list's resourceVersion (other writes may move it meanwhile).
		again := get(true, nil)
		var l1b listBody
		decodeList(t, again, &l1b)
		if !bytes.Equal(withoutListRV(again, l1b.Metadata.ResourceVersion), withoutListRV(full, l1.Metadata.ResourceVersion)) {
			t.Errorf("a gzipped list differs from the identity one")
		}

		// A write: the next list has the new state.
		obj, err := dyn.Get(ctx, "c0007", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(obj.Object, "changed", "spec", "pad")
		if _, err := dyn.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := dyn.Delete(ctx, "c0009", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		var l2 listBody
		decodeList(t, get(true, nil), &l2)
		if len(l2.Items) != n-1 {
			t.Fatalf("after a delete: %d items, want %d", len(l2.Items), n-1)
		}
		for i, j := 0, 0; i < n; i++ {
			switch i {
			case 9:
				continue
			case 7:
				if bytes.Equal(l2.Items[j], l1.Items[i]) || !bytes.Contains(l2.Items[j], []byte(`"pad":"changed"`)) {
					t.Errorf("updated item: %s", l2.Items[j])
				}
			default:
				if !bytes.Equal(l2.Items[j], l1.Items[i]) {
					t.Errorf("item %d changed:\n%s\n%s", i, l2.Items[j], l1.Items[i])
				}
			}
			j++
		}

		// The first list's state, read again at its resourceVersion: the
		// cache moved on, so storage answers and the list is encoded
		// whole; same bytes as the list written from kept encodings.
		for _, gz := range []bool{false, true} {
			exact := get(gz, url.Values{"resourceVersion": {l1.Metadata.ResourceVersion}, "resourceVersionMatch": {"Exact"}})
			if !bytes.Equal(exact, full) {
				i := 0
				for i < len(exact) && i < len(full) && exact[i] == full[i] {
					i++
				}
				t.Errorf("gzip %v: the list at resourceVersion %s differs from the first at byte %d: %.200s\nvs %.200s",
					gz, l1.Metadata.ResourceVersion, i, exact[max(0, i-50):], full[max(0, i-50):])
			}
		}
		// With a selector and a limit, through both paths alike.
		sel := url.Values{"labelSelector": {"half=1"}, "limit": {"30"}}
		cached := get(false, sel)
		sel.Set("resourceVersion", l1.Metadata.ResourceVersion)
		sel.Set("resourceVersionMatch", "Exact")
		var a, b listBody
		decodeList(t, cached, &a)
		decodeList(t, get(false, sel), &b)
		if len(a.Items) != 30 || len(b.Items) != 30 {
			t.Fatalf("selected pages of %d and %d items, want 30", len(a.Items), len(b.Items))
		}
		// The odd items: 1, 3, 5 unchanged, 7 updated since, 9 deleted.
		for i := range 3 {
			if !bytes.Equal(a.Items[i], b.Items[i]) || !bytes.Equal(a.Items[i], l1.Items[2*i+1]) {
				t.Errorf("selected item %d differs", i)
			}
		}
		if !bytes.Equal(b.Items[3], l1.Items[7]) || !bytes.Equal(b.Items[29], l1.Items[59]) || bytes.Equal(a.Items[3], b.Items[3]) {
			t.Errorf("the selected page at resourceVersion %s is not that state's", l1.Metadata.ResourceVersion)
		}
		// Pages of the current state hold the same items as the full list.
		var paged []json.RawMessage
		q := url.Values{"limit": {"150"}}
		for pages := 0; ; pages++ {
			var p listBody
			decodeList(t, get(pages%2 == 0, q), &p)
			paged = append(paged, p.Items...)
			if p.Metadata.Continue == "" {
				if p.Metadata.RemainingItemCount != nil {
					t.Errorf("last page has remainingItemCount %d", *p.Metadata.RemainingItemCount)
				}
				break
			}
			if want := int64(len(l2.Items) - len(paged)); p.Metadata.RemainingItemCount == nil || *p.Metadata.RemainingItemCount != want {
				t.Errorf("page %d: remainingItemCount %v, want %d", pages, p.Metadata.RemainingItemCount, want)
			}
			q.Set("continue", p.Metadata.Continue)
		}
		if len(paged) != len(l2.Items) {
			t.Fatalf("pages held %d items, want %d", len(paged), len(l2.Items))
		}
		for i := range paged {
			if !bytes.Equal(paged[i], l2.Items[i]) {
				t.Fatalf("paged item %d differs:\n%s\n%s", i, paged[i], l2.Items[i])
			}
		}
	})
}

type listBody struct {
	Metadata struct {
		ResourceVersion    string `json:"resourceVersion"`
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// withoutListRV is a list's body with its own resourceVersion (the last
// one: the list's metadata is encoded after its items) taken out.
func withoutListRV(body []byte, rv string) []byte {
	f := []byte(`"resourceVersion":"` + rv + `"`)
	i := bytes.LastIndex(body, f)
	if i < 0 {
		return body
	}
	return append(append(bytes.Clone(body[:i]), `"resourceVersion":"-"`...), body[i+len(f):]...)
}

func decodeList(t *testing.T, body []byte, into *listBody) {
	t.Helper()
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("decode list: %v: %.300s", err, body)
	}
}

// rawListGet GETs path as JSON over the config's transport; gzip asks for a
// compressed answer (Go's transport undoes it), else identity is asked.
func rawListGet(t *testing.T, cfg *rest.Config, path string, query url.Values, gzip bool) []byte {
	t.Helper()
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.Host + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if !gzip {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", u, resp.Status, body)
	}
	if gzip != resp.Uncompressed && len(body) > 128<<10 {
		t.Errorf("GET %s: gzip asked %v, answer decompressed by the transport %v (%d bytes)", u, gzip, resp.Uncompressed, len(body))
	}
	return body
}
