package storage

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestContinueRoundTrip(t *testing.T) {
	const prefix = "/registry/pods/"
	tests := []struct {
		key string
		rv  int64
	}{
		{key: prefix + "ns/a\x00", rv: 5},
		{key: prefix + "ns/b", rv: -1},
		{key: prefix + "x", rv: 1 << 40},
	}
	for _, tt := range tests {
		tok, err := EncodeContinue(tt.key, prefix, tt.rv)
		if err != nil {
			t.Fatalf("encode %q: %v", tt.key, err)
		}
		key, rv, err := DecodeContinue(tok, prefix)
		if err != nil || key != tt.key || rv != tt.rv {
			t.Errorf("round trip of %q@%d: got %q@%d, %v", tt.key, tt.rv, key, rv, err)
		}
	}
	if _, err := EncodeContinue("/other/x", prefix, 1); err == nil {
		t.Errorf("encode of a key outside the prefix: got nil error")
	}
}

func TestDecodeContinueInvalid(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := map[string]string{
		"not base64":    "!!!",
		"not json":      enc("nope"),
		"wrong version": enc(`{"v":"v2","rv":1,"start":"a"}`),
		"rv 0":          enc(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`),
		"empty start":   enc(`{"v":"meta.k8s.io/v1","rv":1,"start":""}`),
		"traversal":     enc(`{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets/x"}`),
		"double slash":  enc(`{"v":"meta.k8s.io/v1","rv":1,"start":"a//b"}`),
		"dot segment":   enc(`{"v":"meta.k8s.io/v1","rv":1,"start":"a/./b"}`),
	}
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			if _, _, err := DecodeContinue(tok, "/registry/pods/"); !errors.Is(err, ErrInvalidContinue) {
				t.Errorf("got %v, want ErrInvalidContinue", err)
			}
		})
	}
}

// FuzzDecodeContinue: decoding never panics, an accepted token never leaves
// the prefix, and it re-encodes to an equivalent token.
func FuzzDecodeContinue(f *testing.F) {
	const prefix = "/registry/pods/"
	for _, seed := range []string{
		"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NSwic3RhcnQiOiJucy9hXHUwMDAwIn0",
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":-1,"start":"../x"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":3,"start":"/a/b"}`)),
		"", "!!", "e30",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		key, rv, err := DecodeContinue(tok, prefix)
		if err != nil {
			if !errors.Is(err, ErrInvalidContinue) {
				t.Fatalf("error %v does not wrap ErrInvalidContinue", err)
			}
			return
		}
		if !strings.HasPrefix(key, prefix) || strings.Contains(key[len(prefix)-1:], "/../") || rv == 0 {
			t.Fatalf("accepted %q -> %q@%d", tok, key, rv)
		}
		if key == prefix {
			return // start "/": cannot be re-encoded (empty start), but stays inside the prefix
		}
		again, err := EncodeContinue(key, prefix, rv)
		if err != nil {
			t.Fatalf("re-encode %q: %v", key, err)
		}
		key2, rv2, err := DecodeContinue(again, prefix)
		if err != nil || key2 != key || rv2 != rv {
			t.Fatalf("re-decode: got %q@%d, %v; want %q@%d", key2, rv2, err, key, rv)
		}
	})
}

// Golden tokens of kube-apiserver v1.37.2 (/work/refbin/kube-apiserver on
// etcd, default flags, session 15): GET with limit=1 of the lists below,
// the objects created in this order: namespace fl15-a; configmaps cm1, cm2,
// cm3 and events e1, e2 in it. Each is re-encoded here from the list's key
// as kapi's registry gives it (as kube's does), its last item's key and the
// revision, in the form of the layer that served it (the watch cache for
// configmaps and namespaces, etcd3 for events, which kube-apiserver does not
// cache by default).
var goldenTokens = []struct {
	request   string
	key       string // the list's key
	lastKey   string // the page's last item
	rv        int64
	cacheForm bool
	token     string
}{{
	request: "GET /api/v1/namespaces/fl15-a/configmaps?limit=1",
	key:     "/configmaps/fl15-a", lastKey: "/configmaps/fl15-a/cm1", rv: 418, cacheForm: true,
	token: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDE4LCJzdGFydCI6Ii9jbTFcdTAwMDAifQ", // start "/cm1\u0000"
}, {
	request: "GET /api/v1/configmaps?limit=1 (the first one: fl15-a/cm1)",
	key:     "/configmaps", lastKey: "/configmaps/fl15-a/cm1", rv: 426, cacheForm: true,
	token: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDI2LCJzdGFydCI6Ii9mbDE1LWEvY20xXHUwMDAwIn0", // start "/fl15-a/cm1\u0000"
}, {
	request: "GET /api/v1/namespaces?limit=1 (the first one: adm12953)",
	key:     "/namespaces", lastKey: "/namespaces/adm12953", rv: 426, cacheForm: true,
	token: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDI2LCJzdGFydCI6Ii9hZG0xMjk1M1x1MDAwMCJ9", // start "/adm12953\u0000"
}, {
	request: "GET /api/v1/namespaces/fl15-a/events?limit=1",
	key:     "/events/fl15-a", lastKey: "/events/fl15-a/e1", rv: 426, cacheForm: false,
	token: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDI2LCJzdGFydCI6ImUxXHUwMDAwIn0", // start "e1\u0000"
}, {
	// The 410's fresh token is etcd3's (the cache hands a compacted
	// token to the store), at the latest revision.
	request: "GET /api/v1/namespaces/fl15-a/configmaps?limit=1&continue=<the first token, rv 995, compacted> (410)",
	key:     "/configmaps/fl15-a", lastKey: "/configmaps/fl15-a/cm1", rv: -1, cacheForm: false,
	token: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiY20xXHUwMDAwIn0", // start "cm1\u0000"
}}

func TestContinueGolden(t *testing.T) {
	for _, g := range goldenTokens {
		tok, err := EncodeContinue(g.lastKey+"\x00", ContinuePrefix(g.key, g.cacheForm), g.rv)
		if err != nil || tok != g.token {
			t.Errorf("%s: token %q, %v; kube-apiserver's %q", g.request, tok, err, g.token)
		}
		// Either form resumes the list after the last item: every
		// layer decodes under the key's directory.
		from, rv, err := DecodeContinue(g.token, g.key+"/")
		if err != nil || from != g.lastKey+"\x00" || rv != g.rv {
			t.Errorf("%s: decoded %q@%d, %v; want %q@%d", g.request, from, rv, err, g.lastKey+"\x00", g.rv)
		}
	}
}

// TestDecodeContinueMessages: kube-apiserver's texts (its 400 says
// "invalid continue token: " and then these), checked against
// /work/refbin/kube-apiserver v1.37.2 with GET
// /api/v1/namespaces/fl15-a/configmaps?limit=1&continue=<token>.
func TestDecodeContinueMessages(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct{ token, msg string }{
		{"!!!", "continue key is not valid: illegal base64 data at input byte 0"},
		{enc("nope"), "continue key is not valid: invalid character 'o' in literal null (expecting 'u')"},
		{enc(`{"v":"v0","rv":1,"start":"cm1"}`), "continue key is not valid: server does not recognize this encoded version v0"},
		{enc(`{"v":"meta.k8s.io/v1","rv":0,"start":"cm1"}`), "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		{enc(`{"v":"meta.k8s.io/v1","rv":5,"start":""}`), "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
		{enc(`{"v":"meta.k8s.io/v1","rv":5,"start":"../secrets/x"}`), "continue key is not valid: ../secrets/x"},
	}
	for _, tt := range tests {
		_, _, err := DecodeContinue(tt.token, "/configmaps/fl15-a/")
		if err == nil || err.Error() != tt.msg {
			t.Errorf("token %s: error %v, want %q", tt.token, err, tt.msg)
		}
	}
	// kube-apiserver reads any negative revision as the latest: rv -5
	// served the next page.
	from, rv, err := DecodeContinue(enc(`{"v":"meta.k8s.io/v1","rv":-5,"start":"cm1\u0000"}`), "/configmaps/fl15-a/")
	if err != nil || from != "/configmaps/fl15-a/cm1\x00" || rv >= 0 {
		t.Errorf("rv -5: %q@%d, %v; want the latest from cm1", from, rv, err)
	}
}
