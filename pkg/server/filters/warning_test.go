package filters

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

// The recorder itself (dedupe, escaping, truncation) is tested in
// pkg/endpoints/warning; here, that the filter puts one on the context
// and it writes to the response's headers.
func TestWithWarningRecorder(t *testing.T) {
	h := WithWarningRecorder(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, s := range []string{"a", "", "b", "a"} {
			warning.AddWarning(r.Context(), s)
		}
	}), discard())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	want := []string{`299 - "a"`, `299 - "b"`}
	if got := rec.Header().Values("Warning"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got warnings %q, want %q", got, want)
	}
}
