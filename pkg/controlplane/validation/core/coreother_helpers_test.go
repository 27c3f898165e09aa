package core

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldErrs renders errors as "<type> <field>: <detail>" (what the API's
// Status causes carry: reason, field, message).
func fieldErrs(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = string(e.Type) + " " + e.Field + ": " + e.Detail
	}
	return out
}

// expectErrs fails t unless errs are exactly want, in order.
func expectErrs(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	got := fieldErrs(errs)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
