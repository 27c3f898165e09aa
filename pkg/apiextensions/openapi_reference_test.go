package apiextensions

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TestOpenAPIV3MatchesReference: the v3 document of a custom resource's
// group-version equals, as JSON, the one kube-apiserver v1.37.2
// (hack/build-reference.sh) served for the same CRD
// (testdata/widgets.w.example.com.crd.yaml: an int-or-string, an
// embedded resource, a default, a nullable enum, a list-type set, a CEL
// rule, the status and scale subresources), captured with
// `curl .../openapi/v3/apis/w.example.com/v1 | jq -S -c .` into
// testdata/openapi-v3-w.example.com-v1.reference.json.
func TestOpenAPIV3MatchesReference(t *testing.T) {
	ts := serveReferenceCRD(t)
	want, err := os.ReadFile("testdata/openapi-v3-w.example.com-v1.reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	eventually(t, waitTimeout, "the group-version's v3 document", func() bool {
		code, body := ts.do(t, "GET", "/openapi/v3/apis/w.example.com/v1", "")
		got = body
		return code == 200
	})
	if canonical(t, got) != canonical(t, want) {
		t.Fatalf("v3 document differs from the reference's:\n got %.600s\nwant %.600s", canonical(t, got), canonical(t, want))
	}
}

// TestOpenAPIV2MatchesReference: the same CRD's kind definition in the
// v2 document equals the reference's (its .definitions entry, captured
// into testdata/openapi-v2-com.example.w.v1.Widget.reference.json): no
// defaults, no anyOf, nullable and int-or-string untyped, an embedded
// resource that preserves unknown fields without properties.
func TestOpenAPIV2MatchesReference(t *testing.T) {
	ts := serveReferenceCRD(t)
	want, err := os.ReadFile("testdata/openapi-v2-com.example.w.v1.Widget.reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var got json.RawMessage
	eventually(t, waitTimeout, "the kind's v2 definition", func() bool {
		code, body := ts.do(t, "GET", "/openapi/v2", "", "Accept", "application/json")
		var doc struct {
			Definitions map[string]json.RawMessage `json:"definitions"`
		}
		if code != 200 || json.Unmarshal(body, &doc) != nil {
			return false
		}
		got = doc.Definitions["com.example.w.v1.Widget"]
		return got != nil
	})
	if canonical(t, got) != canonical(t, want) {
		t.Fatalf("v2 definition differs from the reference's:\n got %s\nwant %s", canonical(t, got), canonical(t, want))
	}
}

// serveReferenceCRD starts a server serving the CRD the reference's
// documents were captured for.
func serveReferenceCRD(t *testing.T) *testServer {
	t.Helper()
	ts := startServer(t, serverOptions{})
	raw, err := os.ReadFile("testdata/widgets.w.example.com.crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	return ts
}

// canonical re-encodes a JSON document with sorted keys.
func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %.200s: %v", b, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(out))
}
