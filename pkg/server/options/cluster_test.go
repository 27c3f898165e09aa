package options

import (
	"strings"
	"testing"
)

func TestParseJoinToken(t *testing.T) {
	hash := strings.Repeat("0a", 32)
	secret := strings.Repeat("f", 64)
	tok, err := ParseJoinToken(" K10" + hash + "::server:" + secret + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if tok.Secret != secret || tok.CAHash[0] != 0x0a || tok.String() != "K10"+hash+"::server:"+secret {
		t.Errorf("parsed %+v, formatted %q", tok, tok.String())
	}
	for _, bad := range []string{
		"",
		"K11" + hash + "::server:" + secret,
		"K10" + hash + secret,
		"K10" + hash[:62] + "::server:" + secret,
		"K10" + strings.Repeat("zz", 32) + "::server:" + secret,
		"K10" + hash + "::server:short",
	} {
		if _, err := ParseJoinToken(bad); err == nil {
			t.Errorf("ParseJoinToken(%q) succeeded", bad)
		}
	}
}

func TestClusterOptionsValidate(t *testing.T) {
	token := "K10" + strings.Repeat("0a", 32) + "::server:" + strings.Repeat("f", 64)
	for _, tc := range []struct {
		name     string
		mod      func(*ClusterOptions)
		embedded bool
		want     string // "" means valid
	}{
		{"default", func(*ClusterOptions) {}, true, ""},
		{"defaults are not checked without a cluster", func(o *ClusterOptions) { o.PeerAddress = "bad" }, true, ""},
		{"init", func(o *ClusterOptions) { o.Init = true }, true, ""},
		{"join", func(o *ClusterOptions) { o.Join, o.Token = "https://10.0.0.1:6443", token }, true, ""},
		{"both", func(o *ClusterOptions) { o.Init, o.Join, o.Token = true, "https://10.0.0.1:6443", token }, true, "exclusive"},
		{"external etcd", func(o *ClusterOptions) { o.Init = true }, false, "can not be used with --etcd-servers"},
		{"join without token", func(o *ClusterOptions) { o.Join = "https://10.0.0.1:6443" }, true, "needs --token"},
		{"join over http", func(o *ClusterOptions) { o.Join, o.Token = "http://10.0.0.1:6443", token }, true, "not an https://host:port URL"},
		{"bad token", func(o *ClusterOptions) { o.Join, o.Token = "https://10.0.0.1:6443", "secret" }, true, "--token: join token does not start"},
		{"token without join", func(o *ClusterOptions) { o.Token = token }, true, "only used with --join"},
		{"unspecified peer", func(o *ClusterOptions) { o.Init, o.PeerAddress = true, "0.0.0.0:2380" }, true, "unspecified address"},
		{"no port", func(o *ClusterOptions) { o.Init, o.ClientAddress = true, "127.0.0.1" }, true, "--etcd-client-address"},
		{"same addresses", func(o *ClusterOptions) { o.Init, o.ClientAddress = true, o.PeerAddress }, true, "must differ"},
		{"bad name", func(o *ClusterOptions) { o.Init, o.MemberName = true, "a=b" }, true, "--etcd-member-name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewClusterOptions()
			tc.mod(o)
			errs := o.Validate(tc.embedded)
			if tc.want == "" {
				if len(errs) > 0 {
					t.Errorf("unexpected errors: %v", errs)
				}
				return
			}
			found := false
			for _, err := range errs {
				found = found || strings.Contains(err.Error(), tc.want)
			}
			if !found {
				t.Errorf("errors %v, want one containing %q", errs, tc.want)
			}
		})
	}
}
