package handlers

import (
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

func TestNegotiateMediaType(t *testing.T) {
	s := &RequestScope{Serializer: scheme.Codecs, TableConvertor: nil}
	for _, tc := range []struct {
		accept  string
		ok      bool
		want    string
		convert string
		pretty  bool
	}{
		{"", true, "application/json", "", false},
		{"*/*", true, "application/json", "", false},
		{"*", true, "application/json", "", false},
		{"application/*", true, "application/json", "", false},
		{"application/yaml, application/json", true, "application/yaml", "", false},
		{"application/json;q=0.1, application/vnd.kubernetes.protobuf", true, "application/vnd.kubernetes.protobuf", "", false},
		{"*/*;q=0.8, application/yaml;q=0.8", true, "application/yaml", "", false},
		{"application/json;pretty=1", true, "application/json", "", true},
		{"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", true, "application/json", "PartialObjectMetadata", false},
		// No TableConvertor: Table is not offered.
		{"application/json;as=Table;g=meta.k8s.io;v=v1", false, "", "", false},
		{"application/json;as=Table;g=meta.k8s.io;v=v1, application/yaml", true, "application/yaml", "", false},
		{"application/json;as=Pod;g=;v=v1", false, "", "", false},
		{"application/json;stream=other", false, "", "", false},
		{"application/yaml;stream=watch", false, "", "", false},
		{"application/json;sv=v1", true, "application/json", "", false},
		{"text/html, image/png", false, "", "", false},
		{"application/cbor", false, "", "", false},
		{"/,;;=,", false, "", "", false},
	} {
		o, ok := negotiateMediaType(tc.accept, scheme.Codecs, s)
		if ok != tc.ok {
			t.Errorf("%q: got ok %v, want %v", tc.accept, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		convert := ""
		if o.convert != nil {
			convert = o.convert.Kind
		}
		if o.accepted.MediaType != tc.want || convert != tc.convert || o.pretty != tc.pretty {
			t.Errorf("%q: got %s as=%q pretty=%v, want %s as=%q pretty=%v", tc.accept, o.accepted.MediaType, convert, o.pretty, tc.want, tc.convert, tc.pretty)
		}
	}
}

func TestNegotiateInput(t *testing.T) {
	for _, tc := range []struct {
		ct   string
		want string
	}{
		{"", "application/json"},
		{"application/json; charset=utf-8", "application/json"},
		{"application/json", "application/json"},
		{"Application/JSON", "application/json"},
		{"application/yaml", "application/yaml"},
		{"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"},
		{"text/plain", ""},
		{"application/cbor", ""},
		{";;", ""},
	} {
		req := httptest.NewRequest("POST", "/", nil)
		req.Header.Set("Content-Type", tc.ct)
		info, err := negotiateInput(req, scheme.Codecs)
		if (err == nil) != (tc.want != "") || (err == nil && info.MediaType != tc.want) {
			t.Errorf("%q: got %q, %v; want %q", tc.ct, info.MediaType, err, tc.want)
		}
	}
}

// TestNegotiateInputAllocations: the Content-Types clients send (none, or
// a served type spelled exactly) are negotiated without allocating —
// every write request negotiates its body.
func TestNegotiateInputAllocations(t *testing.T) {
	// As a RequestScope holds it: an interface value (converting the
	// CodecFactory struct at each call would allocate in the test).
	var ns runtime.NegotiatedSerializer = scheme.Codecs
	for _, ct := range []string{"", "application/json", "application/vnd.kubernetes.protobuf"} {
		req := httptest.NewRequest("POST", "/", nil)
		req.Header.Set("Content-Type", ct)
		if n := testing.AllocsPerRun(100, func() {
			if _, err := negotiateInput(req, ns); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%q: %v allocations per negotiation, want 0", ct, n)
		}
	}
}

// FuzzParseAccept: any Accept header negotiates without panicking, and a
// success always names a served media type.
func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/json;q=0.5,application/yaml", "a/b;c=d;q=x", ",,;", "application/json;as=Table;g=meta.k8s.io;v=v1;stream=watch"} {
		f.Add(s)
	}
	s := &RequestScope{Serializer: scheme.Codecs}
	f.Fuzz(func(t *testing.T, accept string) {
		o, ok := negotiateMediaType(accept, scheme.Codecs, s)
		if ok {
			switch o.accepted.MediaType {
			case mediaTypeJSON, mediaTypeYAML, mediaTypeProtobuf:
			default:
				t.Fatalf("%q: negotiated %q", accept, o.accepted.MediaType)
			}
		}
	})
}
