package cel

import (
	"regexp"

	"cel.dev/cel-go/cel"
)

// undeclaredReference is cel-go's error for an unknown name: it now
// leaves out an empty container and may suggest names.
var undeclaredReference = regexp.MustCompile("undeclared reference to '([^']*)'(?: \\(did you mean '[^']*'(?: or '[^']*')?\\?(?:, enable with `[^`]*`)?\\))?")

// IssuesString is iss printed as the cel-go of kube-apiserver v1.37
// (v0.29) prints compile errors, which clients see in validation errors:
// an unknown name is reported "in container" the empty one,
// without suggestions. The expressions kapi compiles have no container.
func IssuesString(iss *cel.Issues) string {
	return undeclaredReference.ReplaceAllString(iss.String(), "undeclared reference to '$1' (in container '')")
}
