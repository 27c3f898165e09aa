package validation

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// summarize renders errs as "<type> <field>" lines, e.g.
// "FieldValueRequired data[tls.key]".
func summarize(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s", string(e.Type), e.Field))
	}
	return out
}

// checkErrs fails unless errs are exactly want (as summarize renders
// them), in order.
func checkErrs(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	got := summarize(errs)
	if len(want) == 0 {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Errorf("got errors\n  %s\nwant\n  %s\n(details: %v)", strings.Join(got, "\n  "), strings.Join(want, "\n  "), errs)
	}
}

// checkDetail fails unless some error in errs has field f and a detail
// containing detail.
func checkDetail(t *testing.T, errs field.ErrorList, f, detail string) {
	t.Helper()
	for _, e := range errs {
		if e.Field == f && strings.Contains(e.Detail, detail) {
			return
		}
	}
	t.Errorf("got %v, want an error at %s with detail containing %q", errs, f, detail)
}

const (
	required    = "FieldValueRequired"
	invalid     = "FieldValueInvalid"
	forbidden   = "FieldValueForbidden"
	tooLong     = "FieldValueTooLong"
	unsupported = "FieldValueNotSupported"
)

func ptr[T any](v T) *T { return &v }
