package accessreview

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

type runtimeObject = runtime.Object

func fmtRules(v any) string { return fmt.Sprint(v) }

func errsOf(agg interface{ Errors() []error }) []error {
	if agg == nil {
		return nil
	}
	return agg.Errors()
}
