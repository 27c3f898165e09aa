package authenticator

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadTokenFile: upstream's CSV format (tokenfile.NewCSV): fields as
// they are, groups split on commas, empty tokens skipped, the last of a
// repeated token wins, fewer than three columns an error.
func TestLoadTokenFile(t *testing.T) {
	p := writeFile(t, "t1,alice,1\n"+
		"t2,bob,2,\"g1,g2\"\n"+
		",empty,3\n"+
		"t3,carol,4,\n"+
		"t1,alice-again,5,admins\n")
	got, err := LoadTokenFile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d tokens, want 3", len(got))
	}
	if u := got["t1"]; u.Name != "alice-again" || u.UID != "5" || strings.Join(u.Groups, ",") != "admins" {
		t.Errorf("t1: got %+v, want the later line", u)
	}
	if u := got["t2"]; u.Name != "bob" || strings.Join(u.Groups, "|") != "g1|g2" {
		t.Errorf("t2: got %+v", u)
	}
	if u := got["t3"]; len(u.Groups) != 1 || u.Groups[0] != "" {
		t.Errorf("t3: got groups %q, want [\"\"] as upstream's strings.Split", u.Groups)
	}
	if _, err := LoadTokenFile(writeFile(t, "t1,alice\n"), nil); err == nil || !strings.Contains(err.Error(), "must have at least 3 columns (token, user name, user uid), found 2") {
		t.Errorf("two columns: got %v", err)
	}
	if _, err := LoadTokenFile(writeFile(t, "\"unterminated,a,b\n"), nil); err == nil {
		t.Error("bad CSV: want an error")
	}
	if _, err := LoadTokenFile(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("missing file: want an error")
	}
}

// TestAudienceAgnostic: static tokens serve the API audiences only.
func TestAudienceAgnostic(t *testing.T) {
	a := AudienceAgnostic([]string{"api", "api2"}, NewStaticTokens(map[string]*user.Info{"t": {Name: "alice"}}))
	ctx := context.Background()
	for _, tc := range []struct {
		auds     []string
		set      bool
		wantOK   bool
		wantAuds string
	}{
		{nil, false, true, "api,api2"},
		{[]string{"api2", "x"}, true, true, "api2"},
		{[]string{"x"}, true, false, ""},
	} {
		c := ctx
		if tc.set {
			c = WithAudiences(ctx, tc.auds)
		}
		u, auds, ok, err := a.AuthenticateToken(c, "t")
		if err != nil || ok != tc.wantOK || strings.Join(auds, ",") != tc.wantAuds || (ok && (u.Name != "alice" || !u.InGroup(user.AllAuthenticated))) {
			t.Errorf("audiences %q: got %+v %q %v %v", tc.auds, u, auds, ok, err)
		}
	}
}

// FuzzBearerRequest: any Authorization header value through the bearer
// authenticator over static tokens never panics; only the exact token
// authenticates, and any other bearer token is an error (a 401).
func FuzzBearerRequest(f *testing.F) {
	a := BearerRequest(UnionToken(AudienceAgnostic([]string{"api"}, NewStaticTokens(map[string]*user.Info{"secret-token": {Name: "alice"}}))))
	for _, s := range []string{"Bearer secret-token", "bearer secret-token", "Bearer secret-token extra", "Bearer secret-tokeN", "Bearer ", "Basic x", "", "Bearer  secret-token", "Bearer a.b.c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r, err := http.NewRequest(http.MethodGet, "/", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", header)
		u, ok, err := a.AuthenticateRequest(r)
		tok, isBearer := BearerToken(r)
		switch {
		case !isBearer:
			if ok || err != nil {
				t.Fatalf("no bearer token: got %v %v", ok, err)
			}
		case tok == "secret-token":
			if !ok || err != nil || u.Name != "alice" {
				t.Fatalf("the token: got %+v %v %v", u, ok, err)
			}
		default:
			if ok || err == nil {
				t.Fatalf("token %q: got ok=%v err=%v, want an error", tok, ok, err)
			}
		}
	})
}
