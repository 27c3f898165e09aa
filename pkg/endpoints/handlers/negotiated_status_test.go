package handlers

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestRootErrorsNegotiated checks NotFoundInRoot and
// MethodNotAllowedInRoot against kube-apiserver v1.37.2's answers (see
// testdata/negotiated/README.md): go-restful's service errors are written
// negotiated, without X-Content-Type-Options.
func TestRootErrorsNegotiated(t *testing.T) {
	accepts := map[string]string{
		"json": "application/json",
		"yaml": "application/yaml",
		"pb":   "application/vnd.kubernetes.protobuf",
		"html": "text/html",
	}
	cases := []struct {
		name, method, target string
		write                func(http.ResponseWriter, *http.Request)
	}{
		{"404root", http.MethodGet, "/api/v2", NotFoundInRoot},
		{"405root", http.MethodPost, "/api", MethodNotAllowedInRoot},
	}
	for _, tc := range cases {
		for suffix, accept := range accepts {
			name := tc.name + "-" + suffix
			t.Run(name, func(t *testing.T) {
				req := httptest.NewRequest(tc.method, tc.target, nil)
				req.Header.Set("User-Agent", "kubectl/v1.37.2")
				req.Header.Set("Accept", accept)
				rec := httptest.NewRecorder()
				tc.write(rec, req)

				var lines []string
				for _, k := range []string{"Content-Type", "X-Content-Type-Options", "Retry-After"} {
					if v := rec.Header().Get(k); v != "" {
						lines = append(lines, strings.ToLower(k)+": "+v)
					}
				}
				sort.Strings(lines)
				gotHead := "status: " + strconv.Itoa(rec.Code) + "\n" + strings.Join(lines, "\n") + "\n"
				wantHead, err := os.ReadFile(filepath.Join("testdata", "negotiated", name+".head"))
				if err != nil {
					t.Fatal(err)
				}
				wantBody, err := os.ReadFile(filepath.Join("testdata", "negotiated", name+".body"))
				if err != nil {
					t.Fatal(err)
				}
				if gotHead != string(wantHead) {
					t.Errorf("head:\n%s\nwant:\n%s", gotHead, wantHead)
				}
				if got := rec.Body.Bytes(); !bytes.Equal(got, wantBody) {
					t.Errorf("body:\n%q\nwant:\n%q", got, wantBody)
				}
			})
		}
	}
}
