package authenticator

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

func TestTokenAuthenticator(t *testing.T) {
	loopback := &user.Info{Name: user.APIServerUser, Groups: []string{user.AllAuthenticated, user.SystemPrivileged}}
	tokens := map[string]*user.Info{
		"0f5c-loopback": loopback,
		"t2":            {Name: "carol", Groups: []string{"dev"}},
		"":              {Name: "empty-token"},
		"nil-user":      nil,
	}
	a := NewTokenAuthenticator(tokens)
	tokens["late"] = &user.Info{Name: "added-later"} // the map was copied

	tests := []struct {
		name       string
		header     []string
		wantUser   string
		wantGroups []string
		wantErr    error
	}{
		{name: "no header"},
		{name: "basic auth", header: []string{"Basic Zm9vOmJhcg=="}},
		{name: "scheme only", header: []string{"Bearer"}},
		{name: "empty token", header: []string{"Bearer "}},
		{name: "double space", header: []string{"Bearer  0f5c-loopback"}},
		{
			name: "loopback token", header: []string{"Bearer 0f5c-loopback"},
			wantUser: user.APIServerUser, wantGroups: []string{user.AllAuthenticated, user.SystemPrivileged},
		},
		{
			name: "lower-case scheme, surrounding space", header: []string{"  bearer t2 "},
			wantUser: "carol", wantGroups: []string{"dev", user.AllAuthenticated},
		},
		{
			name: "third part ignored", header: []string{"Bearer t2 trailing"},
			wantUser: "carol", wantGroups: []string{"dev", user.AllAuthenticated},
		},
		{name: "unknown token", header: []string{"Bearer nope"}, wantErr: ErrInvalidBearerToken},
		{name: "prefix of a token", header: []string{"Bearer 0f5c"}, wantErr: ErrInvalidBearerToken},
		{name: "added after construction", header: []string{"Bearer late"}, wantErr: ErrInvalidBearerToken},
		{name: "nil user entry", header: []string{"Bearer nil-user"}, wantErr: ErrInvalidBearerToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			for _, h := range tc.header {
				r.Header.Add("Authorization", h)
			}
			info, ok, err := a.AuthenticateRequest(r)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got error %v, want %v", err, tc.wantErr)
			}
			if tc.wantUser == "" {
				if ok || info != nil {
					t.Errorf("got ok=%v info=%+v, want none", ok, info)
				}
				return
			}
			if !ok || info.Name != tc.wantUser || !slices.Equal(info.Groups, tc.wantGroups) {
				t.Errorf("got ok=%v user %+v, want %q %v", ok, info, tc.wantUser, tc.wantGroups)
			}
			// The caller may change what it got without affecting later requests.
			info.Groups[0] = "mutated"
			again, _, _ := a.AuthenticateRequest(r)
			if !slices.Equal(again.Groups, tc.wantGroups) {
				t.Errorf("after mutating a returned user, got groups %v, want %v", again.Groups, tc.wantGroups)
			}
		})
	}
	if loopback.Groups[0] != user.AllAuthenticated {
		t.Errorf("the caller's user.Info was changed")
	}
}

func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  x", "Bearer", "", "Basic x", "BEARER a b c", "Bearer \x00"} {
		f.Add(s)
	}
	a := NewTokenAuthenticator(map[string]*user.Info{"abc": {Name: "u"}})
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["Authorization"] = []string{header}
		info, ok, err := a.AuthenticateRequest(r)
		token, hasToken := BearerToken(r)
		switch {
		case ok:
			if token != "abc" || info.Name != "u" || err != nil {
				t.Fatalf("header %q: got ok with token %q user %+v err %v", header, token, info, err)
			}
		case err != nil:
			if !hasToken || token == "abc" {
				t.Fatalf("header %q: got error %v for token %q (present %v)", header, err, token, hasToken)
			}
		default:
			if hasToken {
				t.Fatalf("header %q: no opinion although token %q is present", header, token)
			}
		}
	})
}
