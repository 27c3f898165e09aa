package cel

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
)

// envLines are the functions (one "function overloadID" line per
// overload) and macros ("macro name/args") of env, sorted.
func envLines(env *cel.Env) []string {
	var lines []string
	for fn, decl := range env.Functions() {
		for _, o := range decl.OverloadDecls() {
			lines = append(lines, fn+" "+o.ID())
		}
	}
	for _, m := range env.Macros() {
		lines = append(lines, fmt.Sprintf("macro %s/%d", m.Function(), m.ArgCount()))
	}
	slices.Sort(lines)
	return lines
}

// TestUpstreamEnvironment checks that the functions, overloads and macros
// of EnvOptions' environment are those of upstream's base environment for
// new expressions at the default compatibility version
// (testdata/upstream/env_new.txt, from envdump.go.txt), but for the known
// differences listed here: a rule using a function upstream does not
// have must fail to compile, and one upstream has must compile.
func TestUpstreamEnvironment(t *testing.T) {
	data, err := os.ReadFile("testdata/upstream/env_new.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	env, err := cel.NewEnv(EnvOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	got := envLines(env)
	for _, l := range got {
		if _, found := slices.BinarySearch(want, l); !found && !knownEnvDifferences[l] {
			t.Errorf("kapi has %q, upstream does not", l)
		}
	}
	for _, l := range want {
		if _, found := slices.BinarySearch(got, l); !found && !knownEnvDifferences[l] {
			t.Errorf("upstream has %q, kapi does not", l)
		}
	}
	for l := range knownEnvDifferences {
		_, inGot := slices.BinarySearch(got, l)
		_, inWant := slices.BinarySearch(want, l)
		if inGot == inWant {
			t.Errorf("%q is no longer a difference: remove it from knownEnvDifferences", l)
		}
	}
}

// knownEnvDifferences are the lines of TestUpstreamEnvironment kapi does
// not match yet: upstream's base environment declares the authorizer
// library's functions (and the selector ones of AuthzSelectors), which
// only the admission environments (pkg/admission/celauthz, which this
// package may not depend on) declare in kapi, and without fieldSelector
// and labelSelector. A CRD rule cannot reach an authorizer value, so this
// only changes the compile errors of rules naming them.
var knownEnvDifferences = map[string]bool{
	"allowed decision_allowed":                 true,
	"check pathcheck_check":                    true,
	"check resourcecheck_check":                true,
	"error decision_error":                     true,
	"errored decision_errored":                 true,
	"fieldSelector authorizer_fieldselector":   true,
	"group authorizer_group":                   true,
	"labelSelector authorizer_labelselector":   true,
	"name resourcecheck_name":                  true,
	"namespace resourcecheck_namespace":        true,
	"path authorizer_path":                     true,
	"reason decision_reason":                   true,
	"resource groupcheck_resource":             true,
	"serviceAccount authorizer_serviceaccount": true,
	"subresource resourcecheck_subresource":    true,
}
