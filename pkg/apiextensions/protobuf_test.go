package apiextensions

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
)

// TestCustomResourcesInProtobuf checks the protobuf media type on custom
// resources as kube-apiserver v1.37.2 answered it (side by side, the same
// requests): the objects themselves are not served in protobuf (406,
// written in protobuf, naming JSON, YAML and protobuf), while what the
// server makes of them is: PartialObjectMetadata in a get and a watch,
// PartialObjectMetadataList in a list, which client-go's metadata client
// (controller-runtime's metadata-only informers) asks for first.
func TestCustomResourcesInProtobuf(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	ri := serveWidgets(t, ts)
	w, err := ri.Create(ctx, widget("example.com/v1", "Widget", "w", map[string]any{"name": "x"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const (
		pb         = "application/vnd.kubernetes.protobuf"
		collection = "/apis/example.com/v1/namespaces/ns/widgets"
	)
	do := func(t *testing.T, method, path, accept, contentType, body string) (int, string, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, ts.srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
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
		return resp.StatusCode, resp.Header.Get("Content-Type"), b
	}
	decode := func(t *testing.T, b []byte, into runtime.Object) {
		t.Helper()
		info, _ := runtime.SerializerInfoForMediaType(metainternalversionscheme.Codecs.SupportedMediaTypes(), pb)
		if _, _, err := info.Serializer.Decode(b, nil, into); err != nil {
			t.Fatalf("decode %T from protobuf: %v", into, err)
		}
	}

	t.Run("object is 406 in protobuf", func(t *testing.T) {
		for _, path := range []string{collection, collection + "/w", collection + "?watch=1"} {
			code, ct, b := do(t, "GET", path, pb, "", "")
			if code != http.StatusNotAcceptable || ct != pb {
				t.Fatalf("%s: got %d %q, want 406 in protobuf", path, code, ct)
			}
			var s metav1.Status
			decode(t, b, &s)
			if want := "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"; s.Message != want || s.Reason != metav1.StatusReasonNotAcceptable {
				t.Errorf("%s: got %q %q, want %q", path, s.Reason, s.Message, want)
			}
		}
	})
	t.Run("body in an unknown format", func(t *testing.T) {
		code, _, b := do(t, "POST", collection, "application/json", "text/plain", "{}")
		if want := "accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"; code != http.StatusUnsupportedMediaType || !strings.Contains(string(b), want) {
			t.Errorf("got %d %s, want 415 with %q", code, b, want)
		}
		// A custom resource written in protobuf: kube-apiserver's handler
		// panics; kapi answers 415 naming the two types it can be in.
		code, _, b = do(t, "POST", collection, "application/json", pb, "k8s\x00")
		if want := "accepted media types include: application/json, application/yaml\""; code != http.StatusUnsupportedMediaType || !strings.Contains(string(b), want) {
			t.Errorf("protobuf body: got %d %s, want 415 with %q", code, b, want)
		}
	})
	t.Run("metadata get and list", func(t *testing.T) {
		code, ct, b := do(t, "GET", collection+"/w", pb+";as=PartialObjectMetadata;v=v1;g=meta.k8s.io", "", "")
		if code != http.StatusOK || ct != pb {
			t.Fatalf("get: got %d %q %s", code, ct, b)
		}
		var m metav1.PartialObjectMetadata
		decode(t, b, &m)
		if m.Name != "w" || m.UID != w.GetUID() || m.Kind != "PartialObjectMetadata" {
			t.Errorf("get: got %+v", m)
		}
		code, ct, b = do(t, "GET", collection, pb+";as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", "", "")
		if code != http.StatusOK || ct != pb {
			t.Fatalf("list: got %d %q %s", code, ct, b)
		}
		var l metav1.PartialObjectMetadataList
		decode(t, b, &l)
		if len(l.Items) != 1 || l.Items[0].Name != "w" {
			t.Errorf("list: got %+v", l.Items)
		}
	})
	t.Run("metadata client watch", func(t *testing.T) {
		// client-go's metadata client asks for protobuf first.
		mc, err := metadata.NewForConfig(ts.config())
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		wi, err := mc.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("ns").Watch(wctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		defer wi.Stop()
		ev, ok := <-wi.ResultChan()
		if !ok {
			t.Fatal("watch closed")
		}
		if m, ok := ev.Object.(*metav1.PartialObjectMetadata); !ok || m.Name != "w" {
			t.Fatalf("got %s %#v", ev.Type, ev.Object)
		}
		code, ct, _ := do(t, "GET", collection+"?watch=1&timeoutSeconds=1", pb+";as=PartialObjectMetadata;v=v1;g=meta.k8s.io", "", "")
		if code != http.StatusOK || ct != pb+";stream=watch" {
			t.Errorf("raw watch: got %d %q", code, ct)
		}
	})
}
