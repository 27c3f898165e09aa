// Package goldenhttp compares an error answer recorded by a test with
// golden files recorded from kube-apiserver: testdata/<dir>/<name>.head
// (the status and the headers an error writer chooses) and .body (the
// bytes). The golden files' READMEs say how each was recorded. Tests only.
package goldenhttp

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Accepts are the Accept headers the golden files were recorded with, by
// file-name suffix: the three media types kube-apiserver encodes a Status
// in, and one it cannot (answered with indented JSON).
var Accepts = map[string]string{
	"json": "application/json",
	"yaml": "application/yaml",
	"pb":   "application/vnd.kubernetes.protobuf",
	"html": "text/html",
}

// Head is a response's status and the headers an error writer chooses, in
// the form the .head files hold them.
func Head(rec *httptest.ResponseRecorder) string {
	var lines []string
	for _, k := range []string{"Content-Type", "X-Content-Type-Options", "Retry-After"} {
		if v := rec.Header().Get(k); v != "" {
			lines = append(lines, strings.ToLower(k)+": "+v)
		}
	}
	sort.Strings(lines)
	return "status: " + strconv.Itoa(rec.Code) + "\n" + strings.Join(lines, "\n") + "\n"
}

// Check compares rec with testdata/<dir>/<name>.head and .body, relative to
// the test's package directory.
func Check(t testing.TB, dir, name string, rec *httptest.ResponseRecorder) {
	t.Helper()
	wantHead, err := os.ReadFile(filepath.Join("testdata", dir, name+".head"))
	if err != nil {
		t.Fatal(err)
	}
	wantBody, err := os.ReadFile(filepath.Join("testdata", dir, name+".body"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Head(rec); got != string(wantHead) {
		t.Errorf("head:\n%s\nwant:\n%s", got, wantHead)
	}
	if got := rec.Body.Bytes(); !bytes.Equal(got, wantBody) {
		t.Errorf("body:\n%q\nwant:\n%q", got, wantBody)
	}
}
