package cel

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// upstreamGolden is testdata/upstream/costs.json: a corpus of CRD schemas
// with the estimated costs and CRD validation errors kube-apiserver
// v1.37.2's code gives them (see its "source" and README.md there).
type upstreamGolden struct {
	Source  string `json:"source"`
	Entries []struct {
		Name   string                           `json:"name"`
		Schema *apiextensionsv1.JSONSchemaProps `json:"schema"`
		Rules  []struct {
			Path    string  `json:"path"`
			Cost    *uint64 `json:"cost"`
			MsgCost *uint64 `json:"messageExpressionCost"`
			Scaled  *uint64 `json:"scaledCost"`
			Error   string  `json:"error"`
		} `json:"rules"`
		Errors []string `json:"errors"`
	} `json:"entries"`
}

// knownDifferences are the golden entries whose estimates kapi does not
// match yet (see also the apiextensions package's knownErrorDifferences), with
// the reason. The tests fail when one of them comes to match, so that it
// is removed from here.
var knownDifferences = map[string]string{}

func loadUpstreamGolden(t *testing.T) *upstreamGolden {
	t.Helper()
	data, err := os.ReadFile("testdata/upstream/costs.json")
	if err != nil {
		t.Fatal(err)
	}
	var g upstreamGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Entries) < 100 {
		t.Fatalf("golden data has %d entries", len(g.Entries))
	}
	return &g
}

// TestUpstreamCostEstimates checks that every rule's and
// messageExpression's estimated cost, and the rule's cost times its
// cardinality, equal upstream's exactly: cost estimates decide which CRDs
// are accepted, so any difference (up or down) accepts CRDs that
// kube-apiserver refuses or refuses CRDs it accepts.
func TestUpstreamCostEstimates(t *testing.T) {
	g := loadUpstreamGolden(t)
	rules := 0
	for _, e := range g.Entries {
		_, _, est := compileSchema(e.Schema, field.NewPath("spec", "validation", "openAPIV3Schema"), Options{})
		got := map[string]ruleEstimate{}
		for _, r := range est {
			got[r.path] = r
		}
		var diffs []string
		for _, want := range e.Rules {
			rules++
			diffs = append(diffs, compareEstimate(got, want.Path, want.Cost, want.MsgCost, want.Scaled, want.Error)...)
		}
		checkKnown(t, e.Name, diffs)
	}
	if rules < 100 {
		t.Fatalf("only %d rules in the golden data", rules)
	}
}

// checkKnown reports the differences of entry name from upstream, but for
// the known ones; a known difference that is gone is an error too.
func checkKnown(t *testing.T, name string, diffs []string) {
	t.Helper()
	reason, known := knownDifferences[name]
	switch {
	case known && len(diffs) == 0:
		t.Errorf("%s matches upstream now: remove it from knownDifferences (%s)", name, reason)
	case known:
		t.Logf("%s: known difference (%s)", name, reason)
	default:
		for _, d := range diffs {
			t.Errorf("%s %s", name, d)
		}
	}
}

func compareEstimate(got map[string]ruleEstimate, path string, cost, msgCost, scaled *uint64, compileErr string) []string {
	r, ok := got[path]
	if compileErr != "" || cost == nil {
		if ok {
			return []string{fmt.Sprintf("%s: upstream does not compile the rule (%s), kapi estimates %d", path, compileErr, r.cost)}
		}
		return nil
	}
	if !ok {
		return []string{fmt.Sprintf("%s: upstream estimates %d, kapi has no estimate", path, *cost)}
	}
	var out []string
	if r.cost != *cost || r.scaled != *scaled {
		out = append(out, fmt.Sprintf("%s: rule cost %d (scaled %d), upstream %d (scaled %d)", path, r.cost, r.scaled, *cost, *scaled))
	}
	switch {
	case msgCost == nil && r.message != nil:
		out = append(out, fmt.Sprintf("%s: messageExpression cost %d, upstream none", path, *r.message))
	case msgCost != nil && r.message == nil:
		out = append(out, fmt.Sprintf("%s: no messageExpression cost, upstream %d", path, *msgCost))
	case msgCost != nil && *r.message != *msgCost:
		out = append(out, fmt.Sprintf("%s: messageExpression cost %d, upstream %d", path, *r.message, *msgCost))
	}
	return out
}

// TestUpstreamRuntimeCosts evaluates the root rules of the golden entries
// that have objects and checks that the actual cost of each evaluation
// and its result (or error: the per-call limit stops it at the same
// point) are upstream's.
func TestUpstreamRuntimeCosts(t *testing.T) {
	data, err := os.ReadFile("testdata/upstream/costs.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Entries []struct {
			Name    string                           `json:"name"`
			Schema  *apiextensionsv1.JSONSchemaProps `json:"schema"`
			Objects []map[string]any                 `json:"objects"`
			Evals   []struct {
				Object, Rule int
				Cost         uint64
				Result       string
			} `json:"evals"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	evals := 0
	for _, e := range g.Entries {
		if len(e.Evals) == 0 {
			continue
		}
		v, _, _ := compileSchema(e.Schema, field.NewPath("spec", "validation", "openAPIV3Schema"), Options{})
		if v == nil || len(v.root.rules) != len(e.Schema.XValidations) {
			t.Fatalf("%s: rules not compiled", e.Name)
		}
		for _, want := range e.Evals {
			evals++
			r := v.root.rules[want.Rule]
			self := valueOf(v.root.decl, integers(e.Objects[want.Object]))
			out, det, err := r.prog.Eval(map[string]any{"self": self})
			var c uint64
			if det != nil && det.ActualCost() != nil {
				c = *det.ActualCost()
			}
			got := ""
			if err != nil {
				got = "error: " + err.Error()
			} else {
				got = fmt.Sprint(out.Value())
			}
			if c != want.Cost || got != want.Result {
				t.Errorf("%s: rule %q on object %d: cost %d, %s; upstream %d, %s", e.Name, r.rule, want.Object, c, got, want.Cost, want.Result)
			}
		}
	}
	if evals < 50 {
		t.Fatalf("only %d evaluations in the golden data", evals)
	}
}

// integers converts integral JSON numbers to int64, as kapi's decoder
// gives them.
func integers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = integers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = integers(e)
		}
		return out
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}
