package discovery

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

func TestNegotiation(t *testing.T) {
	const (
		jsonType  = "application/json"
		yamlType  = "application/yaml"
		protoType = "application/vnd.kubernetes.protobuf"
	)
	cases := []struct {
		name, method, path, accept string
		cfg                        Config
		wantCode                   int
		wantType                   string
	}{
		{name: "api no accept", path: "/api", wantCode: 200, wantType: jsonType},
		{name: "api trailing slash", path: "/api/", accept: jsonType, wantCode: 200, wantType: jsonType},
		{name: "api client-go", path: "/api", accept: acceptClientGo, wantCode: 200, wantType: contentTypeV2JSON},
		{name: "api client-go nopeer", path: "/api", accept: acceptClientGoPeer, wantCode: 200, wantType: contentTypeV2JSON},
		{name: "api yaml", path: "/api", accept: yamlType, wantCode: 200, wantType: yamlType},
		{name: "api protobuf", path: "/api", accept: protoType, wantCode: 200, wantType: protoType},
		{name: "api json stream watch", path: "/api", accept: "application/json;stream=watch", wantCode: 200, wantType: jsonType},
		{name: "api yaml stream watch", path: "/api", accept: "application/yaml;stream=watch", wantCode: 406},
		{name: "api server version", path: "/api", accept: "application/json;sv=v1", wantCode: 406},
		{name: "api post", method: http.MethodPost, path: "/api", accept: jsonType, wantCode: 405},
		{name: "apis no accept", path: "/apis", wantCode: 200, wantType: jsonType},
		{name: "apis wildcard", path: "/apis", accept: "*/*", wantCode: 200, wantType: jsonType},
		{name: "apis application wildcard", path: "/apis", accept: "application/*", wantCode: 200, wantType: jsonType},
		{name: "apis client-go", path: "/apis", accept: acceptClientGo, wantCode: 200, wantType: contentTypeV2JSON},
		{name: "apis aggregated protobuf", path: "/apis", accept: acceptAggregatedPB, wantCode: 200, wantType: contentTypeV2PB},
		{name: "apis aggregated yaml", path: "/apis", accept: "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", wantCode: 200, wantType: "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{name: "apis aggregated wildcard", path: "/apis", accept: "*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", wantCode: 200, wantType: contentTypeV2JSON},
		{name: "apis v2beta1 falls back", path: "/apis", accept: acceptKubectl127, wantCode: 200, wantType: jsonType},
		{name: "apis v2beta1 served", path: "/apis", accept: acceptKubectl127, cfg: Config{ServeV2Beta1: true}, wantCode: 200, wantType: contentTypeV2Beta1},
		{name: "apis v2beta1 only", path: "/apis", accept: acceptV2Beta1Only, wantCode: 406},
		{name: "apis aggregated disabled", path: "/apis", accept: acceptClientGo, cfg: Config{DisableAggregated: true}, wantCode: 200, wantType: jsonType},
		{name: "apis aggregated only disabled", path: "/apis", accept: contentTypeV2JSON, cfg: Config{DisableAggregated: true}, wantCode: 406},
		{name: "apis wrong kind", path: "/apis", accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupList", wantCode: 406},
		{name: "apis q prefers protobuf", path: "/apis", accept: "application/json;q=0.5,application/vnd.kubernetes.protobuf", wantCode: 200, wantType: protoType},
		// As upstream: aggregated discovery is served whenever a clause
		// asks for it, whatever the q-values.
		{name: "apis aggregated at lower q", path: "/apis", accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.5,application/json", wantCode: 200, wantType: contentTypeV2JSON},
		{name: "apis unknown type", path: "/apis", accept: "text/html", wantCode: 406},
		{name: "apis post", method: http.MethodPost, path: "/apis", accept: jsonType, wantCode: 200, wantType: jsonType},
		{name: "apis slash is legacy only", path: "/apis/", accept: acceptClientGo, wantCode: 200, wantType: jsonType},
		{name: "group client-go", path: "/apis/apps", accept: acceptClientGo, wantCode: 200, wantType: jsonType},
		{name: "group slash", path: "/apis/apps/", accept: jsonType, wantCode: 200, wantType: jsonType},
		{name: "group protobuf", path: "/apis/apps", accept: protoType, wantCode: 200, wantType: protoType},
		{name: "group aggregated only", path: "/apis/apps", accept: acceptAggregatedPB, wantCode: 406},
		{name: "unknown group", path: "/apis/nope.example.com", accept: jsonType, wantCode: 404, wantType: "text/plain; charset=utf-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			h := newManager(t, tc.cfg, allFixtures()...).Handler()
			resp := do(t, h, method, tc.path, tc.accept)
			b := body(t, resp)
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("got status %d, want %d: %s", resp.StatusCode, tc.wantCode, b)
			}
			if tc.wantType != "" {
				if got := resp.Header.Get("Content-Type"); got != tc.wantType {
					t.Errorf("got Content-Type %q, want %q", got, tc.wantType)
				}
			}
			if tc.wantCode == http.StatusNotAcceptable {
				var s metav1.Status
				if err := json.Unmarshal(b, &s); err != nil {
					t.Fatal(err)
				}
				want := "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
				if s.Reason != metav1.StatusReasonNotAcceptable || s.Message != want {
					t.Errorf("got reason %q message %q, want NotAcceptable %q", s.Reason, s.Message, want)
				}
			}
		})
	}
}

func TestAPIServerAddress(t *testing.T) {
	cases := []struct {
		name, address, want string
	}{
		{name: "configured", address: "192.168.1.10:6443", want: "192.168.1.10:6443"},
		{name: "request host", want: "kapi.test"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newManager(t, Config{ExternalAddress: tc.address}, coreV1()).Handler()
			var v metav1.APIVersions
			if err := json.Unmarshal(body(t, do(t, h, http.MethodGet, "/api", "")), &v); err != nil {
				t.Fatal(err)
			}
			want := []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: tc.want}}
			if !reflect.DeepEqual(v.ServerAddressByClientCIDRs, want) {
				t.Errorf("got %+v, want %+v", v.ServerAddressByClientCIDRs, want)
			}
			if v.APIVersion != "" || v.Kind != "APIVersions" {
				t.Errorf("got kind %q apiVersion %q, want APIVersions and no apiVersion", v.Kind, v.APIVersion)
			}
		})
	}
}

func TestNoCoreGroup(t *testing.T) {
	h := newManager(t, Config{}, appsV1()).Handler()
	resp := do(t, h, http.MethodGet, "/api", acceptClientGo)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("got status %d, want 404", resp.StatusCode)
	}
}

func TestETag(t *testing.T) {
	m := newManager(t, Config{}, allFixtures()...)
	h := m.Handler()
	first := do(t, h, http.MethodGet, "/apis", acceptClientGo)
	tag := first.Header.Get("ETag")
	if len(tag) != 130 || tag[0] != '"' || tag[129] != '"' {
		t.Fatalf("got ETag %q, want a quoted SHA-512 hex", tag)
	}
	for k, want := range map[string]string{"Vary": "Accept", "Cache-Control": "public"} {
		if got := first.Header.Get(k); got != want {
			t.Errorf("got %s %q, want %q", k, got, want)
		}
	}
	if got := do(t, h, http.MethodGet, "/apis", acceptAggregatedPB).Header.Get("ETag"); got != tag {
		t.Errorf("protobuf ETag %q, want the JSON one %q", got, tag)
	}
	if got := do(t, h, http.MethodGet, "/api", acceptClientGo).Header.Get("ETag"); got == tag {
		t.Errorf("/api and /apis share ETag %q", got)
	}
	if got := do(t, h, http.MethodGet, "/apis", "application/json").Header.Get("ETag"); got != "" {
		t.Errorf("legacy /apis has ETag %q, want none", got)
	}

	cases := []struct {
		name, ifNoneMatch string
		wantCode          int
	}{
		{name: "matching", ifNoneMatch: tag, wantCode: http.StatusNotModified},
		{name: "unquoted", ifNoneMatch: strings.Trim(tag, `"`), wantCode: http.StatusOK},
		{name: "other", ifNoneMatch: `"0"`, wantCode: http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(t, h, http.MethodGet, "/apis", acceptClientGo, "If-None-Match", tc.ifNoneMatch)
			b := body(t, resp)
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("got status %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if resp.Header.Get("ETag") != tag {
				t.Errorf("got ETag %q, want %q", resp.Header.Get("ETag"), tag)
			}
			if tc.wantCode == http.StatusNotModified && len(b) != 0 {
				t.Errorf("304 has a body of %d bytes", len(b))
			}
		})
	}

	// A change makes a new ETag; undoing it brings the old one back.
	extra := fixture{gv: schema.GroupVersion{Group: "extra.example.com", Version: "v1"}, resources: []metav1.APIResource{{Name: "things", SingularName: "thing", Kind: "Thing", Verbs: crud}}}
	if err := m.AddGroupVersion(extra.gv, extra.resources); err != nil {
		t.Fatal(err)
	}
	changed := do(t, h, http.MethodGet, "/apis", acceptClientGo, "If-None-Match", tag)
	if changed.StatusCode != http.StatusOK || changed.Header.Get("ETag") == tag {
		t.Fatalf("after add: got status %d ETag %q, want 200 and a new ETag", changed.StatusCode, changed.Header.Get("ETag"))
	}
	if !bytes.Contains(body(t, changed), []byte(`"name":"extra.example.com"`)) {
		t.Error("after add: extra.example.com missing from aggregated /apis")
	}
	if got := do(t, h, http.MethodGet, "/api", acceptClientGo).Header.Get("ETag"); got == changed.Header.Get("ETag") {
		t.Error("/api ETag changed with /apis")
	}
	m.RemoveGroupVersion(extra.gv)
	if got := do(t, h, http.MethodGet, "/apis", acceptClientGo, "If-None-Match", tag); got.StatusCode != http.StatusNotModified {
		t.Errorf("after remove: got status %d, want 304", got.StatusCode)
	}
}

func TestProtobuf(t *testing.T) {
	m := newManager(t, Config{ExternalAddress: testExternalAddress}, allFixtures()...)
	h := m.Handler()
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	if err := apidiscoveryv2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	pb := protobuf.NewSerializer(scheme, scheme)
	cases := []struct {
		name, path, accept string
		into               func() runtime.Object
		wantGVK            schema.GroupVersionKind
	}{
		{name: "api", path: "/api", accept: "application/vnd.kubernetes.protobuf", into: func() runtime.Object { return &metav1.APIVersions{} }, wantGVK: schema.GroupVersionKind{Kind: "APIVersions"}},
		{name: "apis", path: "/apis", accept: "application/vnd.kubernetes.protobuf", into: func() runtime.Object { return &metav1.APIGroupList{} }, wantGVK: schema.GroupVersionKind{Version: "v1", Kind: "APIGroupList"}},
		{name: "group", path: "/apis/apps", accept: "application/vnd.kubernetes.protobuf", into: func() runtime.Object { return &metav1.APIGroup{} }, wantGVK: schema.GroupVersionKind{Version: "v1", Kind: "APIGroup"}},
		{name: "aggregated", path: "/apis", accept: acceptAggregatedPB, into: func() runtime.Object { return &apidiscoveryv2.APIGroupDiscoveryList{} }, wantGVK: apidiscoveryv2.SchemeGroupVersion.WithKind("APIGroupDiscoveryList")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := body(t, do(t, h, http.MethodGet, tc.path, tc.accept))
			got := tc.into()
			if _, _, err := pb.Decode(raw, nil, got); err != nil {
				t.Fatalf("decode protobuf: %v", err)
			}
			prefix := []byte("k8s\x00")
			if !bytes.HasPrefix(raw, prefix) {
				t.Fatalf("body does not start with %q", prefix)
			}
			var envelope runtime.Unknown
			if err := envelope.Unmarshal(raw[len(prefix):]); err != nil {
				t.Fatal(err)
			}
			if gvk := schema.FromAPIVersionAndKind(envelope.APIVersion, envelope.Kind); gvk != tc.wantGVK {
				t.Errorf("got envelope %v, want %v", gvk, tc.wantGVK)
			}
			jsonAccept := strings.Replace(tc.accept, "application/vnd.kubernetes.protobuf", "application/json", 1)
			want := tc.into()
			if err := json.Unmarshal(body(t, do(t, h, http.MethodGet, tc.path, jsonAccept)), want); err != nil {
				t.Fatal(err)
			}
			got.GetObjectKind().SetGroupVersionKind(want.GetObjectKind().GroupVersionKind())
			if !reflect.DeepEqual(got, want) {
				t.Errorf("protobuf and JSON differ:\ngot  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestGzip(t *testing.T) {
	// Enough CRD groups to pass the 128 KiB threshold.
	m := newManager(t, Config{}, allFixtures()...)
	for i := 0; i < 400; i++ {
		f := crontabs("v1")
		f.gv.Group = fmt.Sprintf("g%03d.example.com", i)
		if err := m.AddGroupVersion(f.gv, f.resources, f.opts...); err != nil {
			t.Fatal(err)
		}
	}
	h := m.Handler()
	plain := body(t, do(t, h, http.MethodGet, "/apis", acceptClientGo))
	if len(plain) <= gzipThreshold {
		t.Fatalf("body is %d bytes, want more than %d", len(plain), gzipThreshold)
	}
	cases := []struct {
		name, path, accept string
		wantGzip           bool
	}{
		{name: "large aggregated", path: "/apis", accept: acceptClientGo, wantGzip: true},
		{name: "small legacy", path: "/apis/apps", accept: "application/json", wantGzip: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(t, h, http.MethodGet, tc.path, tc.accept, "Accept-Encoding", "deflate, gzip")
			b := body(t, resp)
			gotGzip := resp.Header.Get("Content-Encoding") == "gzip"
			if gotGzip != tc.wantGzip {
				t.Fatalf("got gzip %v, want %v", gotGzip, tc.wantGzip)
			}
			if !gotGzip {
				return
			}
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			unzipped, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(unzipped, plain) {
				t.Error("gunzipped body differs from the identity body")
			}
			if got := resp.Header.Values("Vary"); !reflect.DeepEqual(got, []string{"Accept", "Accept-Encoding"}) {
				t.Errorf("got Vary %q, want [Accept Accept-Encoding]", got)
			}
		})
	}
}

func TestAddGroupVersionErrors(t *testing.T) {
	cases := []struct {
		name      string
		gv        schema.GroupVersion
		resources []metav1.APIResource
		want      string
	}{
		{name: "empty version", gv: schema.GroupVersion{Group: "a"}, want: "version must not be empty"},
		{name: "scope mismatch", gv: schema.GroupVersion{Group: "a", Version: "v1"}, resources: []metav1.APIResource{
			{Name: "things", Namespaced: true, Kind: "Thing"},
			{Name: "things/status", Namespaced: false, Kind: "Thing"},
		}, want: "differ in scope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t, Config{})
			err := m.AddGroupVersion(tc.gv, tc.resources)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
			if got := m.GroupVersions(); len(got) != 0 {
				t.Errorf("got group-versions %v after a failed add, want none", got)
			}
		})
	}
}

func TestSubresourceWithoutParent(t *testing.T) {
	gv := schema.GroupVersion{Group: "a.example.com", Version: "v1"}
	got, err := toAggregated(gv, []metav1.APIResource{{Name: "things/status", Kind: "Thing", Verbs: []string{"get"}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []apidiscoveryv2.APIResourceDiscovery{{
		Resource:     "things",
		Scope:        apidiscoveryv2.ScopeCluster,
		ResponseKind: &metav1.GroupVersionKind{},
		Subresources: []apidiscoveryv2.APISubresourceDiscovery{{
			Subresource:  "status",
			ResponseKind: &metav1.GroupVersionKind{Kind: "Thing"},
			Verbs:        []string{"get"},
		}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
