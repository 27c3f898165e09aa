package cel

import (
	"fmt"
	"math"
	"sort"

	"cel.dev/cel-go/common/cost"
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
// unbounded, how many fit in the largest request), as upstream: the size
// of the node at the path, without sizes of its items, keys or values (a
// map's keys have size 0, as upstream's, whose key type has no bound).
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
			if d.kind != kindMap {
				return nil
			}
			return &cost.SizeEstimate{Min: 0, Max: 0}
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
	return &cost.SizeEstimate{Min: 0, Max: uint64(d.maxElements)}
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
		errs = append(errs, field.Forbidden(e.path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
	}
	return append(errs, field.Forbidden(p, costMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", t.total, staticCRDCostLimit)))
}
