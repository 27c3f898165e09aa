package requestheader

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

func TestSetHeaders(t *testing.T) {
	stale := func() http.Header {
		h := hdr(
			"Authorization", "Bearer secret",
			"Impersonate-User", "root",
			"Impersonate-Group", "system:masters",
			"Impersonate-Uid", "0",
			"Impersonate-Extra-Scopes", "all",
			"X-Remote-User", "mallory",
			"X-Remote-Uid", "m-1",
			"X-Remote-Group", "system:masters",
			"X-Remote-Extra-Scopes", "all",
			"Accept", "application/json",
		)
		// Keys set around http.Header's canonicalization must go too.
		h["x-remote-group"] = []string{"raw"}
		h["x-remote-extra-raw"] = []string{"raw"}
		h["impersonate-user"] = []string{"raw"}
		h["authorization"] = []string{"raw"}
		return h
	}
	tests := []struct {
		name string
		user *user.Info
		want http.Header
	}{
		{
			name: "full user",
			user: &user.Info{
				Name:   "alice",
				UID:    "u-1",
				Groups: []string{"devs", "system:authenticated"},
				Extra: map[string][]string{
					"scopes":           {"view", "edit"},
					"example.com/key%": {"v"},
				},
			},
			want: http.Header{
				"Accept":                              {"application/json"},
				"X-Remote-User":                       {"alice"},
				"X-Remote-Uid":                        {"u-1"},
				"X-Remote-Group":                      {"devs", "system:authenticated"},
				"X-Remote-Extra-Scopes":               {"view", "edit"},
				"X-Remote-Extra-Example.com%2fkey%25": {"v"},
			},
		},
		{
			name: "no uid, groups or extra",
			user: &user.Info{Name: "bob"},
			want: http.Header{"Accept": {"application/json"}, "X-Remote-User": {"bob"}},
		},
		{
			name: "nil user only deletes",
			want: http.Header{"Accept": {"application/json"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := stale()
			SetHeaders(h, tc.user)
			if diff := cmp.Diff(tc.want, h); diff != "" {
				t.Errorf("headers mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEscapeExtraKey(t *testing.T) {
	tests := []struct{ key, want string }{
		{"scopes", "scopes"},
		{"example.com/key%", "example.com%2Fkey%25"},
		{"with space", "with%20space"},
		{"a=b:c", "a%3Db%3Ac"},
		{"ünicode", "%C3%BCnicode"},
		{"tchars!#$&'*+-.^_`|~", "tchars!#$&'*+-.^_`|~"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := EscapeExtraKey(tc.key); got != tc.want {
			t.Errorf("EscapeExtraKey(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// TestSetHeadersRoundTrip sends headers written by SetHeaders over real TLS
// with the generated proxy client certificate, to an authenticator with
// the default configuration, and gets the same user back.
func TestSetHeadersRoundTrip(t *testing.T) {
	f := newFixture(t)
	auth := mustNew(t, DefaultConfig(f.bundle.FrontProxyCAPool))
	tests := []struct {
		name string
		user *user.Info
		want *user.Info // nil: same as user plus system:authenticated
	}{
		{name: "name only", user: &user.Info{Name: "alice"}},
		{name: "everything", user: &user.Info{
			Name:   "system:serviceaccount:ns:sa",
			UID:    "7d2c0a63-2f7e-4a57-b1c5-6b1f3c0d9e11",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns", "a, b"},
			Extra: map[string][]string{
				"authentication.kubernetes.io/pod-name": {"p"},
				"example.com/key%":                      {"v1", "v2"},
				"with space and = and :":                {"x"},
				"ünicode/ключ":                          {"значение"},
				"%zz":                                   {"literal percent"},
				"scopes":                                {"", "edit"},
			},
		}},
		{
			name: "upper-case extra keys arrive lower-cased",
			user: &user.Info{Name: "alice", Extra: map[string][]string{"Example.COM/Key": {"v"}}},
			want: &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}, Extra: map[string][]string{"example.com/key": {"v"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := hdr("Authorization", "Bearer x", "Impersonate-User", "root", "X-Remote-Group", "system:masters", "X-Remote-Extra-Evil", "1")
			SetHeaders(h, tc.user)
			got := f.do(t, auth, f.proxy, h)
			if got.err != nil || !got.ok {
				t.Fatalf("got ok %v, error %v, want the user", got.ok, got.err)
			}
			want := tc.want
			if want == nil {
				w := *tc.user
				w.Groups = append(append([]string{}, w.Groups...), user.AllAuthenticated)
				want = &w
			}
			if diff := cmp.Diff(want, got.user, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("user mismatch (-want +got):\n%s", diff)
			}
			if left := remote(got.left); len(left) != 0 {
				t.Errorf("headers left after authentication: %v", left)
			}
			for k := range got.left {
				if lk := strings.ToLower(k); lk == "authorization" || strings.HasPrefix(lk, "impersonate-") {
					t.Errorf("header %s reached the backend", k)
				}
			}
		})
	}
}

// FuzzExtraKey checks that any extra key survives escaping, header
// canonicalization and unescaping (up to ASCII lower-casing), that escaped
// keys are valid header names, and that unescaping arbitrary names never
// fails.
func FuzzExtraKey(f *testing.F) {
	for _, s := range []string{"", "scopes", "example.com/key%", "%", "%2", "%zz", "%2F", "ünicode", "A B", "\x00\xff", "X-Remote-Extra-", "a%25b%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		esc := EscapeExtraKey(key)
		for i := 0; i < len(esc); i++ {
			if !isTokenByte(esc[i]) {
				t.Fatalf("EscapeExtraKey(%q) = %q holds non-token byte %q", key, esc, esc[i])
			}
		}
		name := http.CanonicalHeaderKey(ExtraHeaderPrefix + esc)
		if !hasPrefixFold(name, ExtraHeaderPrefix) {
			t.Fatalf("canonical name %q lost the prefix", name)
		}
		if got, want := UnescapeExtraKey(name[len(ExtraHeaderPrefix):]), asciiLower(key); got != want {
			t.Fatalf("round trip of %q via %q = %q, want %q", key, name, got, want)
		}

		// Any received name decodes to something, never fails.
		got := UnescapeExtraKey(key)
		if !strings.Contains(key, "%") && got != strings.ToLower(key) {
			t.Fatalf("UnescapeExtraKey(%q) = %q, want it lower-cased only", key, got)
		}
	})
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
