// Package testaudit holds what tests of several packages need to audit a
// server: since kapi, as kube-apiserver, audits nothing without
// --audit-policy-file, a test that reads the audit log passes a policy.
package testaudit

import (
	"os"
	"path/filepath"
	"testing"
)

// MetadataPolicy writes an audit policy recording every request at
// Metadata level without the RequestReceived stage, and returns its
// path.
func MetadataPolicy(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "audit-policy.yaml")
	policy := "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"
	if err := os.WriteFile(p, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
