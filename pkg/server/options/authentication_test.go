package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestAnonymousAuthUsage: the --anonymous-auth line of --help is
// kube-apiserver's. The expected text is the line `kube-apiserver --help`
// of v1.37.2 (/work/refbin/kube-apiserver) printed, with the padding
// between flag and usage collapsed to one space; the flag's default is
// printed once, by pflag.
func TestAnonymousAuthUsage(t *testing.T) {
	const upstream = "--anonymous-auth Enables anonymous requests to the secure port of the API server. " +
		"Requests that are not rejected by another authentication method are treated as anonymous requests. " +
		"Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated. (default true)"
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	NewAuthenticationOptions().AddFlags(fs)
	var got string
	for _, line := range strings.Split(fs.FlagUsages(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "--anonymous-auth" {
			got = strings.Join(f, " ")
		}
	}
	if got != upstream {
		t.Errorf("--anonymous-auth usage:\n got  %q\n want %q", got, upstream)
	}
}
