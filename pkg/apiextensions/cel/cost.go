package cel

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Static cost limits checked when a CRD is written, as upstream: one
// rule's estimated cost (times how often it may run) at most
// staticCostLimit, all rules of a schema together at most
// staticCRDCostLimit.
const (
	staticCostLimit    = 10000000
	staticCRDCostLimit = 100000000
)

// sizeEstimator estimates the sizes of self, oldSelf and the values below
// them from the schema's maxLength, maxItems and maxProperties (or, when
// unbounded, how many fit in the largest request).
type sizeEstimator struct {
	root *declType
}

// EstimateSize implements cost.Estimator.
func (c *sizeEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	path := n.Path()
	if len(path) == 0 || c.root == nil {
		return nil
	}
	d := c.root
	for _, name := range path[1:] {
		switch name {
		case "@items", "@values":
			d = d.elem
		case "@keys":
			return nil
		default:
			if d.kind != kindObject {
				return nil
			}
			f, ok := d.fields[name]
			if !ok {
				return nil
			}
			d = f.decl
		}
		if d == nil {
			return nil
		}
	}
	return sizeOf(d)
}

// sizeOf is the size estimate of values of type d, with the sizes of
// their items, keys and values.
func sizeOf(d *declType) *cost.SizeEstimate {
	out := &cost.SizeEstimate{Min: 0, Max: uint64(d.maxElements)}
	switch d.kind {
	case kindList:
		out.Elem = sizeOf(d.elem)
	case kindMap:
		out.Key = &cost.SizeEstimate{Min: 0, Max: uint64(maxRequestSize - 2)}
		out.Elem = sizeOf(d.elem)
	}
	return out
}

// EstimateCallCost implements cost.Estimator: sizes only.
func (c *sizeEstimator) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

// childCardinality is how often a node's value may occur in one object:
// the product of maxItems and maxProperties of the lists and maps above
// it; nil when one of them is unbounded.
func childCardinality(parent *uint64, s *apiextensionsv1.JSONSchemaProps) *uint64 {
	if parent == nil {
		return nil
	}
	var factor uint64 = 1
	switch s.Type {
	case "object":
		if s.AdditionalProperties != nil {
			if s.MaxProperties == nil {
				return nil
			}
			factor = uint64(zeroIfNegative(*s.MaxProperties))
		}
	case "array":
		if s.MaxItems == nil {
			return nil
		}
		factor = uint64(zeroIfNegative(*s.MaxItems))
	}
	out := multiply(*parent, factor)
	return &out
}

// multiply multiplies, saturating at the largest uint64.
func multiply(a, b uint64) uint64 {
	if a == 0 || b == 0 {
		return 0
	}
	if math.MaxUint64/a < b {
		return math.MaxUint64
	}
	return a * b
}

// scaledRuleCost is a rule's estimated cost times how often it may run;
// under an unbounded list or map, how many values of the node's smallest
// size fit in the largest request.
func scaledRuleCost(maxCost uint64, cardinality *uint64, d *declType) uint64 {
	if cardinality != nil {
		return multiply(maxCost, *cardinality)
	}
	var minSize int64 = 1
	if d != nil {
		minSize = d.minSize
	}
	return multiply(maxCost, uint64(maxRequestSize/(minSize+1)))
}

// costMessage is upstream's message for a cost above its limit.
func costMessage(what string, c, limit uint64) string {
	f := float64(c) / float64(limit)
	var factor string
	switch {
	case f > 100:
		factor = "more than 100x"
	case f < 1.5:
		factor = fmt.Sprintf("%fx", f)
	default:
		factor = fmt.Sprintf("%.1fx", f)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", what, factor)
}

// totalCost sums the estimated costs of a schema's rules and keeps
// the four most expensive (of at least 1% of the limit), as upstream.
type totalCost struct {
	total         uint64
	mostExpensive []pathCost
}

type pathCost struct {
	path *field.Path
	cost uint64
}

func (t *totalCost) observe(p *field.Path, c uint64) {
	if math.MaxUint64-t.total < c {
		t.total = math.MaxUint64
	} else {
		t.total += c
	}
	if c < staticCRDCostLimit/100 {
		return
	}
	t.mostExpensive = append(t.mostExpensive, pathCost{path: p, cost: c})
	sort.SliceStable(t.mostExpensive, func(i, j int) bool { return t.mostExpensive[i].cost > t.mostExpensive[j].cost })
	if len(t.mostExpensive) > 4 {
		t.mostExpensive = t.mostExpensive[:4]
	}
}

// errors reports a total above the limit: each of the most expensive
// rules, then the schema at p.
func (t *totalCost) errors(p *field.Path) field.ErrorList {
	if t.total <= staticCRDCostLimit {
		return nil
	}
	var errs field.ErrorList
	for _, e := range t.mostExpensive {
		errs = append(errs, field.Forbidden(e.path, "contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema"))
	}
	return append(errs, field.Forbidden(p, costMessage("x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema", t.total, staticCRDCostLimit)))
}

// ruleCosts is the cost estimator and tracker of rules: the calls of the
// Kubernetes libraries (quantity, ip, cidr, url, format, semver; see
// extCallEstimate), then those of k8sLibrary.
type ruleCosts struct {
	*libCost
}

// EstimateCallCost implements cost.Estimator.
func (c *ruleCosts) EstimateCallCost(function, overload string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if e := extCallEstimate(c.libCost, function, overload, target, args); e != nil {
		return e
	}
	return c.libCost.EstimateCallCost(function, overload, target, args)
}

// CallCost implements cost.ActualCostEstimator.
func (c *ruleCosts) CallCost(function, overload string, args []ref.Val, result ref.Val) *uint64 {
	if n, ok := extCallCost(function, overload, args); ok {
		return &n
	}
	return c.libCost.CallCost(function, overload, args, result)
}

// stringCost is the cost of traversing a string of size sz, times
// factor, rounded up.
func stringCost(sz uint64, factor float64) uint64 {
	return uint64(math.Ceil(float64(sz) * factor))
}

// extCallEstimate is the estimated cost of a call of the Kubernetes
// libraries, as upstream's estimator: parsing a string is a traversal
// of it, accessors and comparisons are nominal. Upstream only estimates
// the parsing functions it calls with a receiver (it tests target !=
// nil), so quantity, isQuantity, ip, isIP, cidr, isCIDR and
// ip.isCanonical keep cel-go's default: the same is done here, so that
// rules upstream accepts are accepted.
//
// A value of the libraries' types (a quantity, IP, CIDR, URL or semver)
// has size 1, so that comparing two with == has a bounded cost.
func extCallEstimate(e *libCost, function, overload string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	est := extCallCostEstimate(e, function, overload, target, args)
	switch overload {
	case "string_to_quantity", "quantity_add", "quantity_add_int", "quantity_sub", "quantity_sub_int", "quantity_multiply_int",
		"string_to_ip", "cidr_ip", "string_to_cidr", "cidr_masked", "string_to_url", "string_to_semver", "string_bool_to_semver":
		if est == nil {
			// cel-go's default cost of a call.
			est = &cost.CallEstimate{CostEstimate: cost.FixedCostEstimate(1)}
		}
		est.ResultSize = &cost.SizeEstimate{Min: 1, Max: 1}
	}
	return est
}

func extCallCostEstimate(e *libCost, function, overload string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	nominal := &cost.CallEstimate{CostEstimate: cost.FixedCostEstimate(1)}
	switch function {
	case "join":
		// Not a library call, but the way to print validate's messages:
		// the result is the items and separators, as upstream.
		if target == nil || (*target).Type() == nil || (*target).Type().Kind() != types.ListKind {
			return nil
		}
		list := e.size(*target)
		if list.Elem == nil {
			return nil
		}
		sz := list.Multiply(*list.Elem)
		if len(args) > 0 {
			seps := cost.SizeEstimate{Min: max(list.Min, 1) - 1, Max: max(list.Max, 1) - 1}
			sz = sz.Add(e.size(args[0]).Multiply(seps))
		}
		return &cost.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(cost.StringTraversalCostFactor), ResultSize: &sz}
	case "url":
		if len(args) == 1 {
			return &cost.CallEstimate{CostEstimate: e.size(args[0]).MultiplyByCostFactor(cost.StringTraversalCostFactor)}
		}
	case "ip":
		if target != nil {
			return nominal
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast":
		return nominal
	case "containsIP", "containsCIDR":
		if target == nil || len(args) == 0 {
			return nil
		}
		// Comparing two addresses of 4 or 16 bytes; a CIDR is masked
		// first; a string argument is parsed.
		sz := cost.SizeEstimate{Min: 4, Max: 16}
		c := sz.Add(sz).MultiplyByCostFactor(cost.StringTraversalCostFactor)
		if function == "containsCIDR" {
			c = c.Add(sz.MultiplyByCostFactor(cost.StringTraversalCostFactor)).Add(cost.FixedCostEstimate(1))
		}
		if overload == "cidr_contains_ip_string" || overload == "cidr_contains_cidr_string" {
			c = c.Add(e.size(args[0]).MultiplyByCostFactor(cost.StringTraversalCostFactor))
		}
		return &cost.CallEstimate{CostEstimate: c}
	case "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "mul",
		"major", "minor", "patch":
		return nominal
	case "semver", "isSemver":
		if len(args) > 0 {
			return &cost.CallEstimate{CostEstimate: e.size(args[0]).MultiplyByCostFactor(cost.StringTraversalCostFactor)}
		}
	case "validate":
		if overload == "format-validate" && len(args) == 1 {
			// Formats are checked with regular expressions of (about)
			// the format's regexSize.
			sz := e.size(args[0]).Add(cost.SizeEstimate{Min: 1, Max: 1})
			strCost := sz.MultiplyByCostFactor(cost.StringTraversalCostFactor)
			reCost := cost.CostEstimate{Min: 1, Max: stringCost(uint64(formatRegexSize(target)), cost.RegexStringLengthCostFactor)}
			// The result: an optional list of a few messages, which may
			// quote the string.
			msg := cost.SizeEstimate{Min: 0, Max: addSize(e.size(args[0]).Max, 512)}
			list := cost.ListSizeEstimate(cost.SizeEstimate{Min: 0, Max: 8}, msg)
			res := cost.SizeEstimate{Min: 1, Max: 9, Elem: &list}
			return &cost.CallEstimate{CostEstimate: strCost.Multiply(reCost), ResultSize: &res}
		}
	}
	return nil
}

// extCallCost is the run-time cost of a call of the Kubernetes
// libraries, by the same rules as the estimate (but for the parsing
// functions, which upstream charges by the string's size at run time).
func extCallCost(function, overload string, args []ref.Val) (uint64, bool) {
	size := func(i int) uint64 {
		if len(args) <= i {
			return 0
		}
		return cost.ActualSize(args[i])
	}
	switch function {
	case "url", "cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver":
		return stringCost(size(0), cost.StringTraversalCostFactor), len(args) > 0
	case "ip":
		if overload == "cidr_ip" {
			return 1, true
		}
		return stringCost(size(0), cost.StringTraversalCostFactor), len(args) > 0
	case "ip.isCanonical":
		return stringCost(size(0), 2*cost.StringTraversalCostFactor), len(args) > 0
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
		"sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "mul",
		"major", "minor", "patch":
		return 1, true
	case "containsIP", "containsCIDR":
		if len(args) < 2 {
			return 0, false
		}
		c := stringCost(2*size(0), cost.StringTraversalCostFactor)
		if function == "containsCIDR" {
			c += stringCost(size(0), cost.StringTraversalCostFactor) + 1
		}
		if overload == "cidr_contains_ip_string" || overload == "cidr_contains_cidr_string" {
			c += stringCost(size(1), cost.StringTraversalCostFactor)
		}
		return c, true
	case "validate":
		if overload != "format-validate" || len(args) < 2 {
			return 0, false
		}
		f, ok := args[0].(namedFormat)
		if !ok {
			return 0, false
		}
		return stringCost(size(1)+1, cost.StringTraversalCostFactor) * stringCost(uint64(f.maxRegexSize), cost.RegexStringLengthCostFactor), true
	}
	return 0, false
}

// formatRegexSize is the regexSize of the format a validate call is
// made on: that of format.<name>(), else the largest.
func formatRegexSize(target *cost.AstNode) int {
	if target != nil && (*target).Expr() != nil && (*target).Expr().Kind() == ast.CallKind {
		call := (*target).Expr().AsCall()
		if name, ok := strings.CutPrefix(call.FunctionName(), "format."); ok && len(call.Args()) == 0 && !call.IsMemberFunction() {
			if f, ok := namedFormats()[name]; ok {
				return f.maxRegexSize
			}
		}
	}
	return maxFormatRegexSize
}

// addSize adds, saturating at the largest uint64.
func addSize(a, b uint64) uint64 {
	if math.MaxUint64-a < b {
		return math.MaxUint64
	}
	return a + b
}
