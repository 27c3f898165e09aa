package server

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

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// TestNotReadyNegotiated checks the 503 answered before
// MuxAndDiscoveryComplete against kube-apiserver v1.37.2's answers (see
// testdata/negotiated/README.md): the Status in the media type Accept asks
// for, indented JSON when nothing acceptable is asked for, Retry-After: 5
// and no X-Content-Type-Options.
func TestNotReadyNegotiated(t *testing.T) {
	accepts := map[string]string{
		"json": "application/json",
		"yaml": "application/yaml",
		"pb":   "application/vnd.kubernetes.protobuf",
		"html": "text/html",
	}
	for suffix, accept := range accepts {
		name := "503-" + suffix
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/apis/foo.example.com/v1/bars", nil)
			req = req.WithContext(request.WithMuxIncomplete(req.Context()))
			req.Header.Set("User-Agent", "kubectl/v1.37.2")
			req.Header.Set("Accept", accept)
			rec := httptest.NewRecorder()
			NotFoundHandler().ServeHTTP(rec, req)

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
