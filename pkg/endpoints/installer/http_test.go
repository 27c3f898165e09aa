package installer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	kapirest "github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

const cmJSON = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`

func decodeStatus(t *testing.T, r response) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(r.body, &s); err != nil {
		t.Fatalf("response %d %q is not a JSON Status: %v", r.code, r.body, err)
	}
	return s
}

func TestDiscovery(t *testing.T) {
	ts := startServer(t)
	for _, path := range []string{"/api/v1", "/api/v1/"} {
		r := ts.do(t, "GET", path, nil)
		if r.code != 200 || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: got %d %s", path, r.code, r.header.Get("Content-Type"))
		}
		var got metav1.APIResourceList
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		want := metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "v1",
			APIResources: []metav1.APIResource{
				{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap",
					Verbs: []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, ShortNames: []string{"cm"}},
				{Name: "configmaps/status", Namespaced: true, Kind: "ConfigMap", Verbs: []string{"get", "patch", "update"}},
				{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", Verbs: []string{"get", "list"}, ShortNames: []string{"ns"}},
			},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", path, diff)
		}
	}
	// Protobuf discovery decodes with the scheme.
	r := ts.do(t, "GET", "/api/v1", nil, "Accept", "application/vnd.kubernetes.protobuf")
	if r.code != 200 || r.header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" {
		t.Fatalf("protobuf discovery: got %d %s", r.code, r.header.Get("Content-Type"))
	}
	obj, _, err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Decode(r.body, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := obj.(*metav1.APIResourceList); !ok || len(l.APIResources) != 3 {
		t.Errorf("protobuf discovery: got %#v", obj)
	}

	cs := ts.clientset(t, false)
	rl, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil || len(rl.APIResources) != 3 {
		t.Errorf("client-go discovery: got %v, %v", rl, err)
	}
}

func TestRouting(t *testing.T) {
	ts := startServer(t)
	if r := ts.do(t, "POST", "/api/v1/namespaces/ns1/configmaps", []byte(cmJSON)); r.code != 201 {
		t.Fatalf("setup create: %d %s", r.code, r.body)
	}
	const notFound = "the server could not find the requested resource"
	const notAllowed = "the server does not allow this method on the requested resource"
	for _, tc := range []struct {
		method, path string
		code         int
		reason       metav1.StatusReason
		message      string
	}{
		{"GET", "/api/v1/foos", 404, metav1.StatusReasonNotFound, notFound},
		{"GET", "/api/v1/namespaces/ns1/foos/x", 404, metav1.StatusReasonNotFound, notFound},
		{"GET", "/api/v1/namespaces/ns1/configmaps/a/bogus", 404, metav1.StatusReasonNotFound, notFound},
		{"GET", "/api/v1/namespaces/ns1/configmaps/a/status/extra", 404, metav1.StatusReasonNotFound, notFound},
		{"GET", "/api/v1/configmaps/a", 404, metav1.StatusReasonNotFound, notFound},
		{"GET", "/api/v1/namespaces/ns1/namespaces", 404, metav1.StatusReasonNotFound, notFound},
		{"GET", "/api/v1/watch/namespaces/ns1/configmaps/a/status", 404, metav1.StatusReasonNotFound, notFound},
		{"POST", "/api/v1/configmaps", 405, metav1.StatusReasonMethodNotAllowed, notAllowed},
		{"DELETE", "/api/v1/configmaps", 405, metav1.StatusReasonMethodNotAllowed, notAllowed},
		{"PUT", "/api/v1/namespaces/ns1/configmaps", 405, metav1.StatusReasonMethodNotAllowed, notAllowed},
		{"PATCH", "/api/v1/namespaces/ns1/configmaps", 405, metav1.StatusReasonMethodNotAllowed, notAllowed},
		{"POST", "/api/v1/namespaces/ns1/configmaps/a", 405, metav1.StatusReasonMethodNotAllowed, notAllowed},
		{"DELETE", "/api/v1/namespaces/ns1/configmaps/a/status", 405, metav1.StatusReasonMethodNotAllowed, notAllowed},
		{"DELETE", "/api/v1/namespaces/x", 405, metav1.StatusReasonMethodNotAllowed, notAllowed},
		{"POST", "/api/v1", 405, metav1.StatusReasonMethodNotAllowed, notAllowed},
		{"OPTIONS", "/api/v1/namespaces/ns1/configmaps/a", 405, metav1.StatusReasonMethodNotAllowed, notAllowed},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := ts.do(t, tc.method, tc.path, nil)
			s := decodeStatus(t, r)
			if r.code != tc.code || s.Code != int32(tc.code) || s.Reason != tc.reason || s.Message != tc.message || s.Kind != "Status" || s.APIVersion != "v1" {
				t.Errorf("got %d %+v, want %d %s %q", r.code, s, tc.code, tc.reason, tc.message)
			}
		})
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/api/v1/namespaces/ns1/configmaps/a"},
		{"GET", "/api/v1/namespaces/ns1/configmaps/a/status"},
		{"GET", "/api/v1/namespaces/ns1/configmaps"},
		{"GET", "/api/v1/configmaps"},
		{"GET", "/api/v1/namespaces/x"},
		{"GET", "/api/v1/namespaces"},
	} {
		if r := ts.do(t, tc.method, tc.path, nil); r.code != 200 {
			t.Errorf("%s %s: got %d %s, want 200", tc.method, tc.path, r.code, r.body)
		}
	}
}

func TestNegotiation(t *testing.T) {
	ts := startServer(t)
	if r := ts.do(t, "POST", "/api/v1/namespaces/ns1/configmaps", []byte(cmJSON)); r.code != 201 {
		t.Fatalf("setup create: %d %s", r.code, r.body)
	}
	item, list := "/api/v1/namespaces/ns1/configmaps/a", "/api/v1/namespaces/ns1/configmaps"
	const notAcceptable = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	for _, tc := range []struct {
		name, path, accept string
		code               int
		contentType        string
		bodyHas            string
	}{
		{"default json", item, "", 200, "application/json", `"kind":"ConfigMap"`},
		{"wildcard", item, "*/*", 200, "application/json", `"kind":"ConfigMap"`},
		{"yaml", item, "application/yaml", 200, "application/yaml", "kind: ConfigMap"},
		{"protobuf", item, "application/vnd.kubernetes.protobuf", 200, "application/vnd.kubernetes.protobuf", "k8s\x00"},
		{"q order", item, "application/json;q=0.5, application/yaml", 200, "application/yaml", "kind: ConfigMap"},
		// A type the route does not produce: go-restful's 406, before the
		// handler's negotiation (kube-apiserver v1.37.2's answer).
		{"unsupported", item, "text/html", 406, "application/json", `"message": "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"`},
		{"table", item, "application/json;as=Table;v=v1;g=meta.k8s.io", 200, "application/json", `"kind":"Table","apiVersion":"meta.k8s.io/v1"`},
		{"table v1beta1", list, "application/json;as=Table;v=v1beta1;g=meta.k8s.io", 200, "application/json", `"apiVersion":"meta.k8s.io/v1beta1"`},
		{"table kubectl", list, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", 200, "application/json", `"columnDefinitions":[{"name":"Name"`},
		{"table in protobuf refused", item, "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", 406, "application/json", notAcceptable},
		{"table falls back", item, "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json", 200, "application/json", `"kind":"ConfigMap"`},
		{"unknown as", item, "application/json;as=Foo;v=v1;g=meta.k8s.io", 406, "application/json", notAcceptable},
		{"pom", item, "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", 200, "application/json", `"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1"`},
		{"pom list", list, "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", 200, "application/json", `"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1"`},
		{"pom protobuf", item, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", 200, "application/vnd.kubernetes.protobuf", "PartialObjectMetadata"},
		{"pom on list", list, "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", 406, "application/json", "you requested PartialObjectMetadata, but the requested object is a list (*v1.ConfigMapList)"},
		{"pom list on item", item, "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", 406, "application/json", "you requested PartialObjectMetadataList, but the requested object is not a list (*v1.ConfigMap)"},
		{"status yaml", "/api/v1/namespaces/ns1/configmaps/missing", "application/yaml", 404, "application/yaml", `message: configmaps "missing" not found`},
		{"status protobuf", "/api/v1/namespaces/ns1/configmaps/missing", "application/vnd.kubernetes.protobuf", 404, "application/vnd.kubernetes.protobuf", `configmaps "missing" not found`},
		{"status table accept only", "/api/v1/namespaces/ns1/configmaps/missing", "application/json;as=Table;v=v1;g=meta.k8s.io", 404, "application/json", `"reason": "NotFound"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(t, "GET", tc.path, nil, "Accept", tc.accept)
			if r.code != tc.code || r.header.Get("Content-Type") != tc.contentType || !bytes.Contains(r.body, []byte(tc.bodyHas)) {
				t.Errorf("got %d %q %q, want %d %q containing %q", r.code, r.header.Get("Content-Type"), r.body, tc.code, tc.contentType, tc.bodyHas)
			}
		})
	}
}

func TestTableOptions(t *testing.T) {
	ts := startServer(t)
	if r := ts.do(t, "POST", "/api/v1/namespaces/ns1/configmaps", []byte(cmJSON)); r.code != 201 {
		t.Fatalf("setup create: %d %s", r.code, r.body)
	}
	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, tc := range []struct {
		query   string
		code    int
		wantObj string // kind of the row object, "" for none
	}{
		{"", 200, "PartialObjectMetadata"},
		{"?includeObject=Metadata", 200, "PartialObjectMetadata"},
		{"?includeObject=Object", 200, "ConfigMap"},
		{"?includeObject=None", 200, ""},
		{"?includeObject=Bogus", 400, ""},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := ts.do(t, "GET", "/api/v1/namespaces/ns1/configmaps"+tc.query, nil, "Accept", accept)
			if r.code != tc.code {
				t.Fatalf("got %d %s, want %d", r.code, r.body, tc.code)
			}
			if tc.code != 200 {
				if s := decodeStatus(t, r); !strings.HasPrefix(s.Message, "Unable to convert to Table as requested: ") {
					t.Errorf("got message %q", s.Message)
				}
				return
			}
			var table struct {
				Rows []struct {
					Cells  []any           `json:"cells"`
					Object json.RawMessage `json:"object"`
				} `json:"rows"`
			}
			if err := json.Unmarshal(r.body, &table); err != nil || len(table.Rows) != 1 {
				t.Fatalf("got %s, %v", r.body, err)
			}
			var tm metav1.TypeMeta
			_ = json.Unmarshal(table.Rows[0].Object, &tm)
			if tm.Kind != tc.wantObj {
				t.Errorf("row object kind: got %q, want %q (%s)", tm.Kind, tc.wantObj, table.Rows[0].Object)
			}
		})
	}
}

func TestPrettyAndGzip(t *testing.T) {
	ts := startServer(t)
	big := strings.Repeat("x", 200*1024)
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":%q}}`, big)
	if r := ts.do(t, "POST", "/api/v1/namespaces/ns1/configmaps", []byte(body)); r.code != 201 {
		t.Fatalf("setup create: %d %.200s", r.code, r.body)
	}
	if r := ts.do(t, "POST", "/api/v1/namespaces/ns1/configmaps", []byte(cmJSON)); r.code != 201 {
		t.Fatalf("setup create: %d %s", r.code, r.body)
	}

	r := ts.do(t, "GET", "/api/v1/namespaces/ns1/configmaps/a?pretty=true", nil)
	if !bytes.HasPrefix(r.body, []byte("{\n  \"kind\": \"ConfigMap\"")) {
		t.Errorf("pretty=true: got %q, want 2-space indented JSON", r.body)
	}
	r = ts.do(t, "GET", "/api/v1/namespaces/ns1/configmaps/a", nil, "User-Agent", "curl/8.0")
	if !bytes.HasPrefix(r.body, []byte("{\n  ")) {
		t.Errorf("curl user agent: got %q, want indented JSON", r.body)
	}
	r = ts.do(t, "GET", "/api/v1/namespaces/ns1/configmaps/a?pretty=false", nil, "User-Agent", "curl/8.0")
	if bytes.Contains(r.body, []byte("\n  ")) {
		t.Errorf("pretty=false: got %q, want compact JSON", r.body)
	}

	// Go's transport adds Accept-Encoding: gzip and decompresses; ask
	// explicitly to see the encoding.
	for _, tc := range []struct {
		path     string
		wantGzip bool
	}{
		{"/api/v1/namespaces/ns1/configmaps/big", true},
		{"/api/v1/namespaces/ns1/configmaps/a", false},
	} {
		r := ts.do(t, "GET", tc.path, nil, "Accept-Encoding", "gzip")
		gotGzip := r.header.Get("Content-Encoding") == "gzip"
		if gotGzip != tc.wantGzip {
			t.Errorf("%s: got gzip %v, want %v", tc.path, gotGzip, tc.wantGzip)
			continue
		}
		if gotGzip {
			zr, err := gzip.NewReader(bytes.NewReader(r.body))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil || !bytes.Contains(plain, []byte(big)) || r.header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%s: gzipped body not the object (%v), Vary %q", tc.path, err, r.header.Get("Vary"))
			}
		}
	}
}

func TestWriteErrors(t *testing.T) {
	ts := startServer(t)
	if r := ts.do(t, "POST", "/api/v1/namespaces/ns1/configmaps", []byte(cmJSON)); r.code != 201 {
		t.Fatalf("setup create: %d %s", r.code, r.body)
	}
	coll, item := "/api/v1/namespaces/ns1/configmaps", "/api/v1/namespaces/ns1/configmaps/a"
	tooBig := bytes.Repeat([]byte("x"), 3*1024*1024+1)
	for _, tc := range []struct {
		name, method, path, contentType, body string
		code                                  int
		reason                                metav1.StatusReason
		message                               string
	}{
		{"already exists", "POST", coll, "", cmJSON, 409, metav1.StatusReasonAlreadyExists, `configmaps "a" already exists`},
		{"unsupported media type", "POST", coll, "text/plain", cmJSON, 415, metav1.StatusReasonUnsupportedMediaType,
			"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"},
		{"too large", "POST", coll, "", string(tooBig), 413, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: limit is 3145728"},
		{"bad json", "POST", coll, "", `{"kind":`, 400, metav1.StatusReasonBadRequest, "the object provided is unrecognized (must be of type ConfigMap)"},
		{"wrong kind", "POST", coll, "", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`, 400, metav1.StatusReasonBadRequest, `Secret in version "v1" cannot be handled as a ConfigMap`},
		{"strict unknown", "POST", coll + "?fieldValidation=Strict", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"spec":{"foo":1}}`, 400, metav1.StatusReasonBadRequest,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "spec"`},
		{"strict duplicate", "POST", coll + "?fieldValidation=Strict", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"x":"1","x":"2"}}`, 400, metav1.StatusReasonBadRequest,
			`strict decoding error: duplicate field "data.x"`},
		{"bad fieldValidation", "POST", coll + "?fieldValidation=Loud", "", cmJSON, 422, metav1.StatusReasonInvalid, `fieldValidation: Unsupported value: "Loud"`},
		{"bad dryRun", "POST", coll + "?dryRun=Some", "", cmJSON, 422, metav1.StatusReasonInvalid, `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"`},
		{"long fieldManager", "POST", coll + "?fieldManager=" + strings.Repeat("m", 129), "", cmJSON, 422, metav1.StatusReasonInvalid, "fieldManager: Too long: may not be more than 128 bytes"},
		{"namespace mismatch create", "POST", coll, "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"other"}}`, 400, metav1.StatusReasonBadRequest,
			"the namespace of the provided object does not match the namespace sent on the request"},
		{"name mismatch update", "PUT", item, "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`, 400, metav1.StatusReasonBadRequest,
			"the name of the object (b) does not match the name on the URL (a)"},
		// kube-apiserver v1.37.2's answer (its namer refuses an empty name).
		{"no name update", "PUT", item, "", `{"apiVersion":"v1","kind":"ConfigMap","data":{"x":"y"}}`, 400, metav1.StatusReasonBadRequest,
			"the name of the object (a based on URL) was undeterminable: name must be provided"},
		{"namespace mismatch update", "PUT", item, "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"other"}}`, 400, metav1.StatusReasonBadRequest,
			"the namespace of the object (other) does not match the namespace on the request (ns1)"},
		{"api version mismatch", "PUT", item, "", `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"a"}}`, 400, metav1.StatusReasonBadRequest, ""},
		{"bad timeoutSeconds", "GET", coll + "?timeoutSeconds=abc", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"bad labelSelector", "GET", coll + "?labelSelector=a%3D%3D%3Db", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"bad fieldSelector", "GET", coll + "?fieldSelector=spec.foo%3Dx", "", "", 400, metav1.StatusReasonBadRequest, `"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"bad resourceVersionMatch", "GET", coll + "?resourceVersionMatch=Exact", "", "", 422, metav1.StatusReasonInvalid, "resourceVersionMatch is forbidden unless resourceVersion is provided"},
		{"sendInitialEvents on list", "GET", coll + "?sendInitialEvents=true", "", "", 422, metav1.StatusReasonInvalid, "sendInitialEvents is forbidden for list"},
		{"bad propagationPolicy", "DELETE", item + "?propagationPolicy=Sideways", "", "", 422, metav1.StatusReasonInvalid, `propagationPolicy: Unsupported value: "Sideways"`},
		{"bad delete body", "DELETE", item, "", `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":"x"}`, 400, metav1.StatusReasonBadRequest, ""},
		{"export", "GET", item + "?export=true", "", "", 400, metav1.StatusReasonBadRequest, "the export parameter, deprecated since v1.14, is no longer supported"},
		{"json patch bad", "PATCH", item, "application/json-patch+json", `{"op":1}`, 400, metav1.StatusReasonBadRequest, ""},
		{"json patch test fails", "PATCH", item, "application/json-patch+json", `[{"op":"test","path":"/data/k","value":"zzz"}]`, 422, metav1.StatusReasonInvalid, ""},
		{"merge patch renames", "PATCH", item, "application/merge-patch+json", `{"metadata":{"name":"other"}}`, 400, metav1.StatusReasonBadRequest,
			"the name of the object (other) does not match the name on the URL (a)"},
		{"patch missing", "PATCH", coll + "/missing", "application/merge-patch+json", `{}`, 404, metav1.StatusReasonNotFound, `configmaps "missing" not found`},
		// The route consumes the patch types served (no apply without a
		// field manager): go-restful's 415, as kube-apiserver's routes.
		{"apply not served", "PATCH", item + "?fieldManager=x", "application/apply-patch+yaml", `{}`, 415, metav1.StatusReasonUnsupportedMediaType,
			"415: Unsupported Media Type"},
		{"smp strict", "PATCH", item + "?fieldValidation=Strict", "application/strategic-merge-patch+json", `{"spec":{"a":1}}`, 422, metav1.StatusReasonInvalid, `unknown field "spec"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			hdr := []string{}
			if tc.contentType != "" {
				hdr = append(hdr, "Content-Type", tc.contentType)
			}
			r := ts.do(t, tc.method, tc.path, body, hdr...)
			s := decodeStatus(t, r)
			if r.code != tc.code || s.Code != int32(tc.code) || s.Reason != tc.reason || !strings.Contains(s.Message, tc.message) || s.Status != metav1.StatusFailure {
				t.Errorf("got %d %s %q, want %d %s containing %q", r.code, s.Reason, s.Message, tc.code, tc.reason, tc.message)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	ts := startServer(t)
	for _, tc := range []struct {
		name, query, contentType, body string
		want                           []string
	}{
		{"unknown field warns by default", "", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w1"},"spec":{"foo":1}}`, []string{`299 - "unknown field \"spec\""`}},
		{"duplicate field warns", "?fieldValidation=Warn", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w2"},"data":{"x":"1","x":"2"}}`, []string{`299 - "duplicate field \"data.x\""`}},
		{"yaml warns per field", "", "application/yaml",
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: w3\nfoo: 1\nbar: 2\n", []string{`299 - "unknown field \"bar\""`, `299 - "unknown field \"foo\""`}},
		{"ignore", "?fieldValidation=Ignore", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w4"},"spec":{"foo":1}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(t, "POST", "/api/v1/namespaces/ns1/configmaps"+tc.query, []byte(tc.body), "Content-Type", tc.contentType)
			if r.code != 201 {
				t.Fatalf("got %d %s, want 201", r.code, r.body)
			}
			got := r.header.Values("Warning")
			if diff := cmp.Diff(tc.want, got, cmpSorted); diff != "" {
				t.Errorf("Warning headers (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestWriteResults(t *testing.T) {
	ts := startServer(t)
	coll := "/api/v1/namespaces/ns1/configmaps"
	withFinalizer := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"f","finalizers":["x/y"]}}`
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		kind                     string
	}{
		{"create", "POST", coll, cmJSON, 201, "ConfigMap"},
		{"create dry run", "POST", coll + "?dryRun=All", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry"}}`, 201, "ConfigMap"},
		{"update", "PUT", coll + "/a", cmJSON, 200, "ConfigMap"},
		{"create with finalizer", "POST", coll, withFinalizer, 201, "ConfigMap"},
		{"delete marks", "DELETE", coll + "/f", "", 200, "ConfigMap"},
		{"delete marks orphan false", "DELETE", coll + "/f?orphanDependents=false", "", 202, "ConfigMap"},
		{"delete", "DELETE", coll + "/a", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`, 200, "ConfigMap"},
		{"deletecollection", "DELETE", coll + "?labelSelector=none%3Dmatch", "", 200, "ConfigMapList"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			r := ts.do(t, tc.method, tc.path, body)
			var tm metav1.TypeMeta
			_ = json.Unmarshal(r.body, &tm)
			if r.code != tc.code || tm.Kind != tc.kind {
				t.Errorf("got %d %s (%s), want %d %s", r.code, tm.Kind, r.body, tc.code, tc.kind)
			}
		})
	}
	if r := ts.do(t, "GET", coll+"/dry", nil); r.code != 404 {
		t.Errorf("dry-run create stored the object: GET got %d", r.code)
	}
	r := ts.do(t, "GET", coll+"?labelSelector=none%3Dmatch", nil)
	if !bytes.Contains(r.body, []byte(`"items":[]`)) {
		t.Errorf("empty list: got %s, want items: []", r.body)
	}
}

var _ runtime.Object = (*metav1.Status)(nil)

// A group-version's PatchTypes are the patch types its resources and
// subresources accept (custom resources leave out strategic merge patch):
// any other is a 415 listing them, in their order.
func TestPatchTypes(t *testing.T) {
	cms := newCMStore()
	g := &APIGroupVersion{
		GroupVersion: schema.GroupVersion{Version: "v1"},
		Storage: map[string]kapirest.Storage{
			"configmaps":        cms,
			"configmaps/status": &statusStore{cms},
		},
		PatchTypes: []string{"application/merge-patch+json", "application/json-patch+json"},
		// Custom resources' patch types, served as custom resources are
		// (the handler's own 415 names the types).
		PlainRoutes: true,
		Logger:      slog.New(slog.DiscardHandler),
	}
	h, _, err := g.Build()
	if err != nil {
		t.Fatal(err)
	}
	h = filters.WithRequestInfo(h, request.NewResolver(), slog.New(slog.DiscardHandler))
	do := func(method, path, contentType, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := do("POST", "/api/v1/namespaces/ns1/configmaps", "", cmJSON); rec.Code != 201 {
		t.Fatalf("setup create: %d %s", rec.Code, rec.Body)
	}
	const want415 = "the body of the request was in an unknown format - accepted media types include: application/merge-patch+json, application/json-patch+json"
	for _, tc := range []struct {
		name, path, contentType, body string
		code                          int
	}{
		{"merge patch", "/api/v1/namespaces/ns1/configmaps/a", "application/merge-patch+json", `{"data":{"m":"1"}}`, 200},
		{"json patch", "/api/v1/namespaces/ns1/configmaps/a", "application/json-patch+json", `[{"op":"add","path":"/data/j","value":"1"}]`, 200},
		{"strategic merge patch", "/api/v1/namespaces/ns1/configmaps/a", "application/strategic-merge-patch+json", `{"data":{"s":"1"}}`, 415},
		{"strategic merge patch of status", "/api/v1/namespaces/ns1/configmaps/a/status", "application/strategic-merge-patch+json", `{"data":{"s":"1"}}`, 415},
		{"apply", "/api/v1/namespaces/ns1/configmaps/a?fieldManager=x", "application/apply-patch+yaml", `{}`, 415},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do("PATCH", tc.path, tc.contentType, tc.body)
			if rec.Code != tc.code {
				t.Fatalf("got %d %s, want %d", rec.Code, rec.Body, tc.code)
			}
			if tc.code != 415 {
				return
			}
			s := decodeStatus(t, response{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()})
			if s.Reason != metav1.StatusReasonUnsupportedMediaType || s.Message != want415 {
				t.Errorf("got %s %q, want %s %q", s.Reason, s.Message, metav1.StatusReasonUnsupportedMediaType, want415)
			}
		})
	}
}
