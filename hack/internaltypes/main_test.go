package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedUpToDate regenerates the table from upstream's source, when
// the module cache holds it, and compares it with the committed one.
func TestGeneratedUpToDate(t *testing.T) {
	const version = "v1.37.2"
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@"+version, "pkg", "apis")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("upstream source not in the module cache: %v", err)
	}
	types, err := readAll(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := render(types, version)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../pkg/registry/internaljson/types_generated.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("pkg/registry/internaljson/types_generated.go is not what hack/internaltypes writes; run go generate ./pkg/registry/internaljson")
	}
}
