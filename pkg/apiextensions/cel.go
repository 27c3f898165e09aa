package apiextensions

import (
	"encoding/json"
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Cost limits of CEL validation rules, as upstream: one expression may
// cost at most celPerCallLimit, all rules of one object celTotalBudget.
const (
	celPerCallLimit = 1000000
	celTotalBudget  = 10000000
)

// celValidator evaluates the x-kubernetes-validations rules of one
// version's schema. Rules are compiled once, when the version is served.
// self and oldSelf are declared dyn: values are the unstructured JSON
// values (the schema validator has checked their types before).
type celValidator struct {
	root   *celNode
	budget uint64 // cost budget of one object's rules
}

// celNode holds the compiled rules of one schema node and its children.
type celNode struct {
	typ        string // schema type, the value of the Invalid errors
	rules      []celRule
	props      map[string]*celNode
	additional *celNode
	items      *celNode
	mapKeys    []string // x-kubernetes-list-map-keys of a list-type=map list
}

type celRule struct {
	rule       string
	prog       cel.Program
	msgProg    cel.Program // messageExpression, or nil
	message    string
	reason     apiextensionsv1.FieldValueErrorReason
	fieldPath  []celPathElem // resolved fieldPath, relative to the node
	transition bool          // references oldSelf
}

// newCELValidator compiles the rules of s; p is the path of s, used for
// compile errors (as the CRD validation reports them). A schema without
// rules gives a nil validator.
func newCELValidator(s *apiextensionsv1.JSONSchemaProps, p *field.Path) (*celValidator, field.ErrorList) {
	if s == nil {
		return nil, nil
	}
	env, err := cel.NewEnv(
		cel.Variable("self", cel.DynType),
		cel.Variable("oldSelf", cel.DynType),
	)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(p, fmt.Errorf("cel environment: %w", err))}
	}
	root, errs := compileNode(env, s, p)
	if len(errs) > 0 || root == nil {
		return nil, errs
	}
	return &celValidator{root: root, budget: celTotalBudget}, nil
}

// compileNode compiles s and its children; the result is nil when no
// rule is found below s.
func compileNode(env *cel.Env, s *apiextensionsv1.JSONSchemaProps, p *field.Path) (*celNode, field.ErrorList) {
	if s == nil {
		return nil, nil
	}
	var errs field.ErrorList
	n := &celNode{typ: s.Type}
	if s.XIntOrString {
		n.typ = "integer-or-string"
	}
	vp := p.Child("x-kubernetes-validations")
	for i, r := range s.XValidations {
		rp := vp.Index(i)
		ast, iss := env.Compile(r.Rule)
		if iss.Err() != nil {
			errs = append(errs, field.Invalid(rp.Child("rule"), r.Rule, "compilation failed: "+iss.Err().Error()))
			continue
		}
		prog, err := env.Program(ast, cel.CostLimit(celPerCallLimit), cel.CostTracking(nil))
		if err != nil {
			errs = append(errs, field.Invalid(rp.Child("rule"), r.Rule, "program construction failed: "+err.Error()))
			continue
		}
		cr := celRule{rule: r.Rule, prog: prog, message: strings.TrimSpace(r.Message), transition: referencesOldSelf(ast)}
		if r.Reason != nil {
			cr.reason = *r.Reason
		}
		if cr.fieldPath, err = resolveCELFieldPath(s, r.FieldPath); err != nil {
			errs = append(errs, field.Invalid(rp.Child("fieldPath"), r.FieldPath, err.Error()))
			continue
		}
		if r.MessageExpression != "" {
			mast, iss := env.Compile(r.MessageExpression)
			switch {
			case iss.Err() != nil:
				errs = append(errs, field.Invalid(rp.Child("messageExpression"), r.MessageExpression, "messageExpression compilation failed: "+iss.Err().Error()))
				continue
			case mast.OutputType() != cel.StringType && mast.OutputType() != cel.DynType:
				errs = append(errs, field.Invalid(rp.Child("messageExpression"), r.MessageExpression, "must evaluate to a string"))
				continue
			}
			if cr.msgProg, err = env.Program(mast, cel.CostLimit(celPerCallLimit), cel.CostTracking(nil)); err != nil {
				errs = append(errs, field.Invalid(rp.Child("messageExpression"), r.MessageExpression, "program construction failed: "+err.Error()))
				continue
			}
		}
		n.rules = append(n.rules, cr)
	}
	found := len(n.rules) > 0
	for name, prop := range s.Properties {
		c, cerrs := compileNode(env, &prop, p.Child("properties").Key(name))
		errs = append(errs, cerrs...)
		if c != nil {
			if n.props == nil {
				n.props = map[string]*celNode{}
			}
			n.props[name], found = c, true
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		c, cerrs := compileNode(env, s.AdditionalProperties.Schema, p.Child("additionalProperties"))
		errs = append(errs, cerrs...)
		n.additional, found = c, found || c != nil
	}
	if s.XListType != nil && *s.XListType == "map" {
		n.mapKeys = s.XListMapKeys
	}
	if s.Items != nil && s.Items.Schema != nil {
		c, cerrs := compileNode(env, s.Items.Schema, p.Child("items"))
		errs = append(errs, cerrs...)
		n.items, found = c, found || c != nil
	}
	if !found {
		return nil, errs
	}
	return n, errs
}

// referencesOldSelf reports whether the checked expression uses oldSelf.
func referencesOldSelf(ast *cel.Ast) bool {
	for _, r := range ast.NativeRep().ReferenceMap() {
		if r.Name == "oldSelf" {
			return true
		}
	}
	return false
}

// celBudget is the remaining cost of one object's evaluation; stopped
// ends the evaluation (a call ran out of cost).
type celBudget struct {
	left    uint64
	stopped bool
}

// validate evaluates the rules against obj; old is the stored object on
// update, nil on create.
func (v *celValidator) validate(obj, old map[string]any) field.ErrorList {
	if v == nil {
		return nil
	}
	var oldVal any
	if old != nil {
		oldVal = rootView(old)
	}
	b := &celBudget{left: v.budget}
	return v.root.validate(nil, rootView(obj), oldVal, old != nil, b)
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
// correlates with val (only then transition rules run).
func (n *celNode) validate(p *field.Path, val, old any, hasOld bool, b *celBudget) field.ErrorList {
	if n == nil || val == nil || b.stopped {
		return nil
	}
	var errs field.ErrorList
	for i := range n.rules {
		r := &n.rules[i]
		if r.transition && (!hasOld || old == nil) {
			continue
		}
		if b.stopped {
			return errs
		}
		if b.left == 0 {
			b.stopped = true
			return append(errs, field.Invalid(p, n.typ, "validation failed due to running out of cost budget, no further validation rules will be run"))
		}
		errs = append(errs, r.eval(p, n.typ, val, old, b)...)
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

// eval runs one rule and turns a false result into a field error.
func (r *celRule) eval(p *field.Path, typ string, val, old any, b *celBudget) field.ErrorList {
	vars := map[string]any{"self": val}
	if old != nil {
		vars["oldSelf"] = old
	}
	out, det, err := r.prog.Eval(vars)
	if det != nil && det.ActualCost() != nil {
		b.charge(*det.ActualCost())
	}
	if err != nil {
		if strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded") {
			b.stopped = true
			return field.ErrorList{field.Invalid(p, typ, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, r.errorString()))}
		}
		return field.ErrorList{field.Invalid(p, typ, fmt.Sprintf("%v evaluating rule: %v", err, r.errorString()))}
	}
	if ok, isBool := out.Value().(bool); !isBool {
		return field.ErrorList{field.Invalid(p, typ, fmt.Sprintf("must evaluate to a bool, got %v, evaluating rule: %v", out.Type(), r.errorString()))}
	} else if ok {
		return nil
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
	return field.ErrorList{reasonError(r.reason, ep, typ, msg)}
}

// evalMessage runs the messageExpression; an error or an empty or
// non-string result falls back to the message, as upstream.
func (r *celRule) evalMessage(vars map[string]any, b *celBudget) (string, bool) {
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
func (r *celRule) errorString() string {
	if r.message != "" {
		return r.message
	}
	return strings.TrimSpace(r.rule)
}

func (b *celBudget) charge(c uint64) {
	if c >= b.left {
		b.left = 0
		return
	}
	b.left -= c
}

// reasonError builds the error of a failed rule by its reason, as
// upstream: Invalid unless Forbidden, Required or Duplicate.
func reasonError(reason apiextensionsv1.FieldValueErrorReason, p *field.Path, typ, msg string) *field.Error {
	switch reason {
	case apiextensionsv1.FieldValueForbidden:
		return field.Forbidden(p, msg)
	case apiextensionsv1.FieldValueRequired:
		return field.Required(p, msg)
	case apiextensionsv1.FieldValueDuplicate:
		return field.Duplicate(p, typ)
	default:
		return field.Invalid(p, typ, msg)
	}
}

// parseCELFieldPath splits a rule's fieldPath (".a.b", ".a['b.c']") into
// its property names.
func parseCELFieldPath(s string) ([]string, error) {
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

// celPathElem is one step of a rule's fieldPath: a property, or a key of
// additionalProperties.
type celPathElem struct {
	name string
	key  bool
}

// resolveCELFieldPath resolves a rule's fieldPath against the node's
// schema s, as upstream: every step names a property, or a key when the
// node has additionalProperties.
func resolveCELFieldPath(s *apiextensionsv1.JSONSchemaProps, fieldPath string) ([]celPathElem, error) {
	names, err := parseCELFieldPath(fieldPath)
	if err != nil {
		return nil, err
	}
	var out []celPathElem
	for _, name := range names {
		switch {
		case s.Properties != nil:
			p, ok := s.Properties[name]
			if !ok {
				return nil, fmt.Errorf("does not refer to a valid field")
			}
			s = &p
			out = append(out, celPathElem{name: name})
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s = s.AdditionalProperties.Schema
			out = append(out, celPathElem{name: name, key: true})
		default:
			return nil, fmt.Errorf("does not refer to a valid field")
		}
	}
	return out, nil
}

// listMapKey is the identity of an item of a list-type=map list: its key
// values, JSON-encoded; "" without keys.
func (n *celNode) listMapKey(item any) string {
	m, ok := item.(map[string]any)
	if !ok || len(n.mapKeys) == 0 {
		return ""
	}
	vals := make([]any, len(n.mapKeys))
	for i, k := range n.mapKeys {
		vals[i] = m[k]
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return ""
	}
	return string(b)
}
