package memory

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestContinueTokenRoundTrip(t *testing.T) {
	tests := []struct {
		key string
		rv  int64
	}{
		{"/pods/ns/a\x00", 5},
		{"/pods/ns/b", -1},
		{"/pods/x", 1 << 40},
	}
	for _, tt := range tests {
		tok, err := encodeContinue(tt.key, "/pods/", tt.rv)
		if err != nil {
			t.Fatalf("encode %q: %v", tt.key, err)
		}
		key, rv, err := decodeContinue(tok, "/pods/")
		if err != nil || key != tt.key || rv != tt.rv {
			t.Fatalf("decode(encode(%q, %d)) = %q, %d, %v", tt.key, tt.rv, key, rv, err)
		}
	}
	if _, err := encodeContinue("/configmaps/x", "/pods/", 1); err == nil {
		t.Fatalf("encode a key outside the prefix: got nil error")
	}
	// The shape kube-apiserver uses.
	tok, _ := encodeContinue("/pods/ns/a\x00", "/pods/", 7)
	data, _ := base64.RawURLEncoding.DecodeString(tok)
	if want := `{"v":"meta.k8s.io/v1","rv":7,"start":"ns/a\u0000"}`; string(data) != want {
		t.Fatalf("token JSON %s, want %s", data, want)
	}
}

func FuzzDecodeContinue(f *testing.F) {
	for _, seed := range []string{
		"",
		"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Nywic3RhcnQiOiJucy9hXHUwMDAwIn0",
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":-1,"start":"a"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":3,"start":"../x"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":3,"start":"a//b"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":"v1alpha1","rv":3,"start":"a"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`[1,2]`)),
		"%%%",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		const prefix = "/pods/"
		key, rv, err := decodeContinue(token, prefix)
		if err != nil {
			if !strings.Contains(err.Error(), "continue key is not valid") {
				t.Fatalf("error %q does not say the continue key is not valid", err)
			}
			return
		}
		if !strings.HasPrefix(key, prefix) {
			t.Fatalf("decoded key %q escapes the prefix %q", key, prefix)
		}
		for _, part := range strings.Split(key[len(prefix):], "/") {
			if part == ".." || part == "." {
				t.Fatalf("decoded key %q has a %q segment", key, part)
			}
		}
		if rv == 0 || rv < -1 {
			t.Fatalf("decoded rv %d, want > 0 or -1", rv)
		}
		tok, err := encodeContinue(key, prefix, rv)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		key2, rv2, err := decodeContinue(tok, prefix)
		if err != nil || key2 != key || rv2 != rv {
			t.Fatalf("round trip of %q, %d: %q, %d, %v", key, rv, key2, rv2, err)
		}
	})
}
