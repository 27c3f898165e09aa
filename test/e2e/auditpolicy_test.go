package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// metadataAuditPolicy writes an audit policy recording every request at
// Metadata level without the RequestReceived stage, and returns its
// path: without --audit-policy-file nothing is audited, as upstream.
func metadataAuditPolicy(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "audit-policy.yaml")
	policy := "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"
	if err := os.WriteFile(p, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
