package cel

import (
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/apiextensions/schema"
)

// Cost limits of CEL validation rules, as upstream: one expression may
// cost at most perCallLimit, all rules of one object totalBudget.
const (
	perCallLimit = 1000000
	totalBudget  = 10000000
)

// Validator evaluates the x-kubernetes-validations rules of one
// version's schema. Rules are compiled once, when the version is served,
// with self and oldSelf typed by the schema (see declType); values are
// converted to those types when a rule reads them.
type Validator struct {
	root    *node
	budget  uint64   // cost budget of one object's rules
	metrics *Metrics // observes evaluations, or nil
}

// node holds the compiled rules of one schema node and its children.
type node struct {
	typ        string    // schema type, the value of the Invalid errors
	decl       *declType // type of self, nil when no rule is declared here
	rules      []compiledRule
	props      map[string]*node
	additional *node
	items      *node
	mapKeys    []string // x-kubernetes-list-map-keys of a list-type=map list
}

type compiledRule struct {
	rule       string
	prog       cel.Program
	msgProg    cel.Program // messageExpression, or nil
	message    string
	reason     apiextensionsv1.FieldValueErrorReason
	fieldPath  []pathElem // resolved fieldPath, relative to the node
	transition bool       // references oldSelf
	// optionalOldSelf: oldSelf is an optional, and the rule runs on
	// create and on uncorrelated values with oldSelf = optional.none().
	optionalOldSelf bool
	// compileErr is set when the rule does not compile (only a CRD stored
	// before its rules were checked has such rules); every value of the
	// node then fails with it, as upstream.
	compileErr string
}

// budget is the remaining cost of one object's evaluation; stopped
// ends the evaluation (a call ran out of cost).
type budget struct {
	left    uint64
	stopped bool
	// metrics observes each node's evaluation (nil: none).
	metrics *Metrics
	// ratchet, if not nil, is added the time of ratcheting comparisons.
	ratchet *time.Duration
	// noRatchet: a failed rule fails even on a value equal to its old
	// one (the check of a schema's default against its rules).
	noRatchet bool
}

// Validate evaluates the rules against obj; old is the stored object on
// update, nil on create.
func (v *Validator) Validate(obj, old map[string]any) field.ErrorList {
	return v.ValidateRatcheting(obj, old, nil)
}

// ValidateRatcheting is Validate; ratchet (nil: not measured) is added
// the time spent comparing values with their old ones for ratcheting.
func (v *Validator) ValidateRatcheting(obj, old map[string]any, ratchet *time.Duration) field.ErrorList {
	if v == nil {
		return nil
	}
	var oldVal any
	if old != nil {
		oldVal = rootView(old)
	}
	b := &budget{left: v.budget, metrics: v.metrics, ratchet: ratchet}
	return v.root.validate(nil, rootView(obj), oldVal, old != nil, b)
}

// ValidateDefault checks val, the default of the schema the validator
// was made from, against its rules, reporting at p (the default's path),
// as kube-apiserver v1.37's CRD validation checks every default
// (apiextensions-apiserver pkg/apiserver/schema/defaulting,
// validation.go): first as an update of the default to itself, nothing
// ratcheted (transition rules compare it with itself), then, if that
// passed, as a create (rules with optionalOldSelf see no old value).
func (v *Validator) ValidateDefault(p *field.Path, val any) field.ErrorList {
	if v == nil {
		return nil
	}
	b := &budget{left: v.budget, noRatchet: true}
	if errs := v.root.validate(p, val, val, true, b); len(errs) > 0 {
		return errs
	}
	b = &budget{left: v.budget, noRatchet: true}
	return v.root.validate(p, val, nil, false, b)
}

// rootView is the object as rules at the root see it: metadata holds
// only name and generateName, as upstream.
func rootView(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	view := map[string]any{}
	for _, k := range []string{"name", "generateName"} {
		if v, ok := md[k]; ok {
			view[k] = v
		}
	}
	out["metadata"] = view
	return out
}

// validate evaluates n at path p; hasOld says whether an old value
// correlates with val (only then transition rules run, and only then an
// unchanged value ratchets).
func (n *node) validate(p *field.Path, val, old any, hasOld bool, b *budget) field.ErrorList {
	if n == nil || b.stopped {
		return nil
	}
	if b.metrics != nil {
		// Upstream observes every node it visits, a null value's too,
		// with the time of its rules and of the nodes below it.
		start := time.Now()
		defer func() { b.metrics.observeEvaluation(time.Since(start)) }()
	}
	if val == nil {
		return nil
	}
	var errs field.ErrorList
	if len(n.rules) > 0 {
		errs = n.evalRules(p, val, old, hasOld, b)
	}
	switch v := val.(type) {
	case map[string]any:
		oldMap, _ := old.(map[string]any)
		for k, child := range v {
			c := n.props[k]
			if c == nil {
				if _, declared := n.props[k]; declared || n.additional == nil {
					continue
				}
				c = n.additional
			}
			o, ok := oldMap[k]
			errs = append(errs, c.validate(p.Child(k), child, o, hasOld && ok, b)...)
		}
	case []any:
		// Items correlate with old items only in list-type=map lists,
		// by their keys, as upstream.
		var oldItems map[string]any
		if oldList, ok := old.([]any); ok && hasOld && len(n.mapKeys) > 0 {
			oldItems = make(map[string]any, len(oldList))
			for _, o := range oldList {
				oldItems[n.listMapKey(o)] = o
			}
		}
		for i, child := range v {
			o, ok := oldItems[n.listMapKey(child)]
			errs = append(errs, n.items.validate(p.Index(i), child, o, ok, b)...)
		}
	}
	return errs
}

// evalRules runs the node's rules on val. A rule that does not use
// oldSelf and fails on a value equal to its correlated old value is
// ratcheted (KEP-4008): the failure is dropped.
func (n *node) evalRules(p *field.Path, val, old any, hasOld bool, b *budget) field.ErrorList {
	var errs field.ErrorList
	self := valueOf(n.decl, val)
	var oldSelf any
	if hasOld && old != nil {
		oldSelf = valueOf(n.decl, old)
	}
	unchanged := -1 // not computed yet
	for i := range n.rules {
		r := &n.rules[i]
		if r.compileErr != "" {
			errs = append(errs, field.Invalid(p, n.typ, "rule compile error: "+r.compileErr))
			continue
		}
		if r.prog == nil || (r.transition && oldSelf == nil && !r.optionalOldSelf) {
			continue
		}
		if b.stopped {
			return errs
		}
		if b.left == 0 {
			b.stopped = true
			return append(errs, field.Invalid(p, n.typ, "validation failed due to running out of cost budget, no further validation rules will be run"))
		}
		vars := map[string]any{"self": self}
		switch {
		case r.optionalOldSelf && oldSelf != nil:
			vars["oldSelf"] = types.OptionalOf(types.DefaultTypeAdapter.NativeToValue(oldSelf))
		case r.optionalOldSelf:
			vars["oldSelf"] = types.OptionalNone
		case oldSelf != nil:
			vars["oldSelf"] = oldSelf
		}
		failed, evalErrs := r.eval(p, n.typ, val, vars, b)
		if failed && !r.transition && !b.noRatchet {
			if unchanged < 0 {
				unchanged = 0
				start := time.Now()
				if hasOld && equality.Semantic.DeepEqual(val, old) {
					unchanged = 1
				}
				if b.ratchet != nil {
					*b.ratchet += time.Since(start)
				}
			}
			if unchanged == 1 {
				continue
			}
		}
		errs = append(errs, evalErrs...)
	}
	return errs
}

// eval runs one rule; failed says the rule evaluated to false (an error
// that ratchets), as opposed to an evaluation error.
func (r *compiledRule) eval(p *field.Path, typ string, val any, vars map[string]any, b *budget) (failed bool, errs field.ErrorList) {
	out, det, err := r.prog.Eval(vars)
	if det != nil && det.ActualCost() != nil {
		b.charge(*det.ActualCost())
	}
	if err != nil {
		switch {
		case strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded"):
			b.stopped = true
			return false, field.ErrorList{field.Invalid(p, typ, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, r.errorString()))}
		case strings.HasPrefix(err.Error(), "no such overload"):
			return false, field.ErrorList{field.Invalid(p, typ, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, r.errorString()))}
		}
		return false, field.ErrorList{field.Invalid(p, typ, fmt.Sprintf("%v evaluating rule: %v", err, r.errorString()))}
	}
	if ok, isBool := out.Value().(bool); !isBool {
		return false, field.ErrorList{field.Invalid(p, typ, fmt.Sprintf("must evaluate to a bool, got %v, evaluating rule: %v", out.Type(), r.errorString()))}
	} else if ok {
		return false, nil
	}
	msg := r.message
	if msg == "" {
		msg = "failed rule: " + r.errorString()
	}
	if r.msgProg != nil {
		if m, ok := r.evalMessage(vars, b); ok {
			msg = m
		}
	}
	ep := p
	for _, e := range r.fieldPath {
		if e.key {
			ep = ep.Key(e.name)
		} else {
			ep = ep.Child(e.name)
		}
	}
	return true, field.ErrorList{reasonError(r.reason, ep, failedValue(typ, val), msg)}
}

// evalMessage runs the messageExpression; an error or an empty or
// non-string result falls back to the message, as upstream.
func (r *compiledRule) evalMessage(vars map[string]any, b *budget) (string, bool) {
	out, det, err := r.msgProg.Eval(vars)
	if det != nil && det.ActualCost() != nil {
		b.charge(*det.ActualCost())
	}
	if err != nil {
		return "", false
	}
	s, ok := out.Value().(string)
	if !ok || strings.TrimSpace(s) == "" || strings.Contains(s, "\n") {
		return "", false
	}
	return s, true
}

// errorString names the rule in errors: its message, else its source.
func (r *compiledRule) errorString() string {
	if r.message != "" {
		return r.message
	}
	return strings.TrimSpace(r.rule)
}

func (b *budget) charge(c uint64) {
	if c >= b.left {
		b.left = 0
		return
	}
	b.left -= c
}

// failedValue is the value the error of a failed rule shows, as upstream
// (apiextensions-apiserver v0.37 pkg/apiserver/schema/cel/validation.go,
// validateExpressions): the value itself, but none for an object or an
// array ("spec: Invalid value: <message>").
func failedValue(typ string, val any) any {
	if typ == "object" || typ == "array" {
		return field.OmitValueType{}
	}
	return val
}

// reasonError builds the error of a failed rule by its reason, as
// upstream: Invalid unless Forbidden, Required or Duplicate.
func reasonError(reason apiextensionsv1.FieldValueErrorReason, p *field.Path, value any, msg string) *field.Error {
	switch reason {
	case apiextensionsv1.FieldValueForbidden:
		return field.Forbidden(p, msg)
	case apiextensionsv1.FieldValueRequired:
		return field.Required(p, msg)
	case apiextensionsv1.FieldValueDuplicate:
		return field.Duplicate(p, value)
	default:
		return field.Invalid(p, value, msg)
	}
}

// ParseFieldPath splits a rule's fieldPath (".a.b", ".a['b.c']") into
// its property names.
func ParseFieldPath(s string) ([]string, error) {
	var out []string
	for rest := s; rest != ""; {
		switch {
		case strings.HasPrefix(rest, "['"):
			end := strings.Index(rest[2:], "']")
			if end < 0 {
				return nil, fmt.Errorf("unterminated ['...'] in %q", s)
			}
			out = append(out, rest[2:2+end])
			rest = rest[2+end+2:]
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, fmt.Errorf("empty property name in %q", s)
			}
			out = append(out, rest[:end])
			rest = rest[end:]
		default:
			return nil, fmt.Errorf("must start with '.' or '[' at %q", rest)
		}
	}
	return out, nil
}

// pathElem is one step of a rule's fieldPath: a property, or a key of
// additionalProperties.
type pathElem struct {
	name string
	key  bool
}

// resolveFieldPath resolves a rule's fieldPath against the node's
// schema s, as upstream: every step names a property, or a key when the
// node has additionalProperties.
func resolveFieldPath(s *apiextensionsv1.JSONSchemaProps, fieldPath string) ([]pathElem, error) {
	names, err := ParseFieldPath(fieldPath)
	if err != nil {
		return nil, err
	}
	var out []pathElem
	for _, name := range names {
		switch {
		case s.Properties != nil:
			p, ok := s.Properties[name]
			if !ok {
				return nil, fmt.Errorf("does not refer to a valid field")
			}
			s = &p
			out = append(out, pathElem{name: name})
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s = s.AdditionalProperties.Schema
			out = append(out, pathElem{name: name, key: true})
		default:
			return nil, fmt.Errorf("does not refer to a valid field")
		}
	}
	return out, nil
}

// listMapKey is the identity of an item of n, a list-type=map list (see
// schema.ListMapKey).
func (n *node) listMapKey(item any) string {
	return schema.ListMapKey(item, n.mapKeys)
}
