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
		"rv negative":   enc(`{"v":"meta.k8s.io/v1","rv":-2,"start":"a"}`),
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
		if !strings.HasPrefix(key, prefix) || strings.Contains(key[len(prefix)-1:], "/../") || rv == 0 || rv < -1 {
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
