package e2e

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestKubectlAuthCanI runs kubectl auth can-i (selfsubjectaccessreviews)
// and kubectl auth can-i --list (selfsubjectrulesreviews) with every
// kubectl found (1.27 and 1.33 among them) as the admin user, whom the
// RBAC allows everything (system:masters, bound to cluster-admin).
func TestKubectlAuthCanI(t *testing.T) {
	binaries := kubectls(t)
	srv := kapitest.Start(t)
	for _, kubectl := range binaries {
		t.Run(filepath.Base(kubectl), func(t *testing.T) {
			for _, args := range [][]string{
				{"auth", "can-i", "create", "configmaps"},
				{"auth", "can-i", "delete", "secrets", "-n", "kube-system"},
				{"auth", "can-i", "get", "/healthz"},
			} {
				out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, args...)
				if err != nil || out != "yes\n" {
					t.Errorf("kubectl %s: got %q (%v)\n%s, want yes", strings.Join(args, " "), out, err, stderr)
				}
			}

			out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "auth", "can-i", "--list")
			if err != nil {
				t.Fatalf("kubectl auth can-i --list: %v\n%s", err, stderr)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			header := regexp.MustCompile(`^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$`)
			everything := regexp.MustCompile(`^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$`)
			anyURL := regexp.MustCompile(`^\s+\[\*\]\s+\[\]\s+\[\*\]$`)
			// The admin (system:masters) holds cluster-admin's rules, and
			// those of the roles bound to every authenticated user.
			if len(lines) < 3 || !header.MatchString(lines[0]) || !slices.ContainsFunc(lines, everything.MatchString) || !slices.ContainsFunc(lines, anyURL.MatchString) {
				t.Errorf("kubectl auth can-i --list: got\n%s\nwant the header, *.* with [*] and [*] URLs with [*]", out)
			}
		})
	}
}
