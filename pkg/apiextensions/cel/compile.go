package cel

import (
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/apiextensions/schema"
)

// NewValidator compiles the rules of s; p is the path of s, used for
// the errors of the CRD validation: compile errors, static costs above
// the limits, oldSelf where it cannot be correlated. A schema without
// rules gives a nil validator. The validator is returned even with
// errors: rules that did not compile fail every value they check.
func NewValidator(s *apiextensionsv1.JSONSchemaProps, p *field.Path) (*Validator, field.ErrorList) {
	return NewValidatorWithOptions(s, p, Options{})
}

// NewValidatorWithOptions is NewValidator with metrics (see Options).
func NewValidatorWithOptions(s *apiextensionsv1.JSONSchemaProps, p *field.Path, o Options) (*Validator, field.ErrorList) {
	v, errs, _ := compileSchema(s, p, o)
	return v, errs
}

// compileSchema is NewValidator, with the estimated costs of the rules.
func compileSchema(s *apiextensionsv1.JSONSchemaProps, p *field.Path, o Options) (*Validator, field.ErrorList, []ruleEstimate) {
	if s == nil || !hasRules(s) {
		return nil, nil, nil
	}
	c, err := newCompiler()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(p, fmt.Errorf("cel environment: %w", err))}, nil
	}
	c.metrics, c.serving = o.Metrics, o.Serving
	c.rootDecl = c.types.schemaDecl(s, true, c.types.newSelfTypeName())
	root := c.compileNode(s, p, c.rootDecl, true, &[]uint64{1}[0], nil)
	c.errs = append(c.errs, c.total.errors(p)...)
	if root == nil {
		return nil, c.errs, c.estimates
	}
	return &Validator{root: root, budget: totalBudget, metrics: o.Metrics}, c.errs, c.estimates
}

// hasRules reports whether s or a schema below it has rules.
func hasRules(s *apiextensionsv1.JSONSchemaProps) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	for _, p := range s.Properties {
		if hasRules(&p) {
			return true
		}
	}
	return hasRules(schema.AdditionalProperties(s)) || hasRules(schema.Items(s))
}

// compiler compiles the rules of one schema.
type compiler struct {
	types *typeProvider
	env   *cel.Env // libraries and the schema's object types
	total totalCost
	errs  field.ErrorList
	// rootDecl is the type of the schema's root.
	rootDecl *declType
	// metrics observes compilations (nil: none); serving: observed per
	// node the validator is built over, else per node with rules.
	metrics *Metrics
	serving bool
	// estimates records every rule's estimated costs, for tests that
	// compare them with upstream's.
	estimates []ruleEstimate
}

// ruleEstimate is the estimated cost of the rule at path (its
// x-kubernetes-validations[i]): the rule's, the rule's times how often it
// may run (scaled), its messageExpression's (nil: none).
type ruleEstimate struct {
	path         string
	cost, scaled uint64
	message      *uint64
}

// EnvOptions are the language options and libraries of CRD rules, as
// upstream's base environment at compatibility version 1.37: the lists
// and regex libraries (k8sLibrary), url, quantity, ip and cidr,
// format and semver (version 1). The image library is not provided.
func EnvOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		// The optional library of upstream's cel-go (v0.29, whose latest
		// version is 2): no hasValue(v) and later additions.
		cel.OptionalTypes(cel.OptionalTypesVersion(2)),
		cel.ASTValidators(
			cel.ValidateDurationLiterals(),
			cel.ValidateTimestampLiterals(),
			cel.ValidateRegexLiterals(),
			cel.ValidateHomogeneousAggregateLiterals(),
		),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.TwoVarComprehensions(),
		ext.Lists(ext.ListsVersion(3)),
		k8sLibrary(),
		urlLibrary(),
		quantityLibrary(),
		netLibrary(),
		formatLibrary(),
		semverLibrary(),
		// The cost rules of the cel-go upstream builds with (v0.29):
		// cost model version 0, and its estimate of distinct().
		cel.CostEstimatorOptions(cost.PresenceTestHasCost(false), cost.OverloadCostEstimate("list_distinct", legacyDistinctEstimate)),
		cel.CostModelVersion(0),
	}
}

func newCompiler() (*compiler, error) {
	base, err := cel.NewEnv(EnvOptions()...)
	if err != nil {
		return nil, err
	}
	t := &typeProvider{base: base.CELTypeProvider(), objects: map[string]*declType{}}
	env, err := base.Extend(cel.CustomTypeProvider(t))
	if err != nil {
		return nil, err
	}
	return &compiler{types: t, env: env}, nil
}

// ruleEnvs holds the environments of one node's rules: self and
// oldSelf of the node's type, oldSelf optional in optEnv.
type ruleEnvs struct {
	env, optEnv *cel.Env
	costs       *ruleCosts
}

// nodeEnv builds the environments of a node of type d; optEnv only when
// a rule needs it (optional).
func (c *compiler) nodeEnv(d *declType, optional bool) (*ruleEnvs, error) {
	env, err := c.env.Extend(cel.Variable("self", d.typ), cel.Variable("oldSelf", d.typ))
	if err != nil {
		return nil, err
	}
	out := &ruleEnvs{env: env, costs: &ruleCosts{&libCost{sizes: &sizeEstimator{root: d}}}}
	if optional {
		if out.optEnv, err = c.env.Extend(cel.Variable("self", d.typ), cel.Variable("oldSelf", types.NewOptionalType(d.typ))); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// compileNode compiles s and its children; the result is nil when no
// rule is found below s. d is the type of s, or nil when s is not
// exposed to its parent's rules (it is then derived from s alone);
// cardinality is how often s may occur (nil: unbounded); uncorrelatable
// is the outermost list above s whose items cannot be correlated with
// old items (oldSelf cannot be used below it), or nil.
func (c *compiler) compileNode(s *apiextensionsv1.JSONSchemaProps, p *field.Path, d *declType, resourceRoot bool, cardinality *uint64, uncorrelatable *field.Path) *node {
	if s == nil {
		return nil
	}
	if !hasRules(s) {
		if c.serving && c.metrics != nil {
			c.observeWithoutRules(s, d)
		}
		return nil
	}
	start := time.Now()
	n := &node{typ: s.Type}
	if s.XIntOrString {
		n.typ = "integer-or-string"
	}
	if len(s.XValidations) > 0 {
		if d == nil || d != c.rootDecl {
			// The type of self is named anew on every node with rules
			// (selfTypeN, its fields selfTypeN.name), as upstream's, whose
			// type errors name it.
			d = c.types.schemaDecl(s, resourceRoot, c.types.newSelfTypeName())
		}
		n.decl = d
		c.compileRules(n, s, p, cardinality, uncorrelatable)
	}
	if len(s.XValidations) > 0 || c.serving {
		c.metrics.observeCompilation(time.Since(start))
	}
	var objFields map[string]*declField
	if d != nil && d.kind == kindObject {
		objFields = d.fields
	}
	for name, prop := range s.Properties {
		var cd *declType
		if esc, ok := escape(name); ok && objFields[esc] != nil {
			cd = objFields[esc].decl
		}
		if child := c.compileNode(&prop, p.Child("properties").Key(name), cd, prop.XEmbeddedResource, childCardinality(cardinality, s), uncorrelatable); child != nil {
			if n.props == nil {
				n.props = map[string]*node{}
			}
			n.props[name] = child
		}
	}
	var elem *declType
	if d != nil && (d.kind == kindMap || d.kind == kindList) {
		elem = d.elem
	}
	if ap := schema.AdditionalProperties(s); ap != nil {
		n.additional = c.compileNode(ap, p.Child("additionalProperties"), elem, ap.XEmbeddedResource, childCardinality(cardinality, s), uncorrelatable)
	}
	if s.XListType != nil && *s.XListType == "map" {
		n.mapKeys = s.XListMapKeys
	}
	if is := schema.Items(s); is != nil {
		itemsUncorrelatable := uncorrelatable
		if itemsUncorrelatable == nil && len(n.mapKeys) == 0 {
			itemsUncorrelatable = p
		}
		n.items = c.compileNode(is, p.Child("items"), elem, is.XEmbeddedResource, childCardinality(cardinality, s), itemsUncorrelatable)
	}
	return n
}

// observeWithoutRules observes, for s (of type d, nil if unknown) and
// every node below it, a compilation with nothing to compile, as
// upstream's validator does when it is built over a schema with rules
// elsewhere: it asks each node it reaches to compile its (no) rules. It
// reaches what upstream's does: properties whose escaped name is a field
// of d (or whose name cannot be escaped), items and additionalProperties.
func (c *compiler) observeWithoutRules(s *apiextensionsv1.JSONSchemaProps, d *declType) {
	start := time.Now()
	c.metrics.observeCompilation(time.Since(start))
	for name, prop := range s.Properties {
		var cd *declType
		if esc, ok := escape(name); ok {
			if d == nil || d.kind != kindObject || d.fields[esc] == nil {
				continue
			}
			cd = d.fields[esc].decl
		}
		c.observeWithoutRules(&prop, cd)
	}
	var elem *declType
	if d != nil && (d.kind == kindMap || d.kind == kindList) {
		elem = d.elem
	}
	if ap := schema.AdditionalProperties(s); ap != nil {
		c.observeWithoutRules(ap, elem)
	}
	if is := schema.Items(s); is != nil {
		c.observeWithoutRules(is, elem)
	}
}

// compileRules compiles the rules of node n (schema s at p), checking
// them as upstream's CRD validation does.
func (c *compiler) compileRules(n *node, s *apiextensionsv1.JSONSchemaProps, p *field.Path, cardinality *uint64, uncorrelatable *field.Path) {
	vp := p.Child("x-kubernetes-validations")
	var envs *ruleEnvs
	if n.decl == nil {
		err := fmt.Errorf("internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations")
		c.errs = append(c.errs, field.InternalError(vp, err))
	} else {
		optional := false
		for _, r := range s.XValidations {
			optional = optional || (r.OptionalOldSelf != nil && *r.OptionalOldSelf)
		}
		var err error
		if envs, err = c.nodeEnv(n.decl, optional); err != nil {
			c.errs = append(c.errs, field.InternalError(vp, fmt.Errorf("cel environment: %w", err)))
		}
	}
	for i, r := range s.XValidations {
		rp := vp.Index(i)
		cr := compiledRule{rule: r.Rule, message: strings.TrimSpace(r.Message), optionalOldSelf: r.OptionalOldSelf != nil && *r.OptionalOldSelf}
		if r.Reason != nil {
			cr.reason = *r.Reason
		}
		if strings.TrimSpace(r.Rule) == "" {
			c.errs = append(c.errs, field.Required(rp.Child("rule"), "rule is not specified"))
			continue
		}
		if envs == nil {
			cr.compileErr = "failed to construct type information for x-kubernetes-validations rules"
			n.rules = append(n.rules, cr)
			continue
		}
		c.compileRule(&cr, r, rp, envs, n.decl, cardinality, uncorrelatable)
		fp, err := resolveFieldPath(s, r.FieldPath)
		if err != nil {
			c.errs = append(c.errs, field.Invalid(rp.Child("fieldPath"), r.FieldPath, err.Error()))
		}
		cr.fieldPath = fp
		n.rules = append(n.rules, cr)
	}
}

// compileRule compiles one rule and its messageExpression into cr,
// reporting errors in upstream's order and words.
func (c *compiler) compileRule(cr *compiledRule, r apiextensionsv1.ValidationRule, rp *field.Path, envs *ruleEnvs, d *declType, cardinality *uint64, uncorrelatable *field.Path) {
	env := envs.env
	if cr.optionalOldSelf {
		env = envs.optEnv
	}
	var maxCost uint64
	ast, iss := env.Compile(r.Rule)
	switch {
	case iss.Err() != nil:
		cr.compileErr = "compilation failed: " + IssuesString(iss)
	case ast.OutputType() != cel.BoolType:
		cr.compileErr = "cel expression must evaluate to a bool"
	default:
		cr.transition = referencesOldSelf(ast)
		prog, err := env.Program(ast, programOptions(envs.costs)...)
		if err != nil {
			cr.compileErr = "program instantiation failed: " + err.Error()
			break
		}
		est, err := env.EstimateCost(ast, envs.costs)
		if err != nil {
			cr.compileErr = "cost estimation failed: " + err.Error()
			break
		}
		cr.prog, maxCost = prog, est.Max
	}
	ruleCost := scaledRuleCost(maxCost, cardinality, d)
	if cr.compileErr == "" {
		c.estimates = append(c.estimates, ruleEstimate{path: rp.String(), cost: maxCost, scaled: ruleCost})
	}
	if ruleCost > staticCostLimit {
		c.errs = append(c.errs, field.Forbidden(rp.Child("rule"), costMessage("estimated rule cost", ruleCost, staticCostLimit)))
	}
	c.total.observe(rp.Child("rule"), ruleCost)
	if cr.compileErr != "" {
		c.errs = append(c.errs, field.Invalid(rp.Child("rule"), ruleValue(r), cr.compileErr))
	} else if r.MessageExpression != "" {
		c.compileMessage(cr, r, rp, env, envs.costs)
	}
	// Checked for a rule that failed too, as upstream: one that does not
	// compile (or is not a bool) is not known to use oldSelf, so a set
	// optionalOldSelf is refused beside the compilation error.
	if cr.transition {
		if uncorrelatable != nil {
			c.errs = append(c.errs, field.Invalid(rp.Child("rule"), r.Rule, "oldSelf cannot be used on the uncorrelatable portion of the schema within "+uncorrelatable.String()))
		}
	} else if r.OptionalOldSelf != nil {
		c.errs = append(c.errs, field.Invalid(rp.Child("optionalOldSelf"), *r.OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
	}
}

func (c *compiler) compileMessage(cr *compiledRule, r apiextensionsv1.ValidationRule, rp *field.Path, env *cel.Env, costs *ruleCosts) {
	mp := rp.Child("messageExpression")
	ast, iss := env.Compile(r.MessageExpression)
	if iss.Err() != nil {
		c.errs = append(c.errs, field.Invalid(mp, ruleValue(r), "messageExpression compilation failed: "+IssuesString(iss)))
		return
	}
	if ast.OutputType() != cel.StringType {
		c.errs = append(c.errs, field.Invalid(mp, ruleValue(r), "messageExpression must evaluate to a string"))
		return
	}
	prog, err := env.Program(ast, programOptions(costs)...)
	if err != nil {
		c.errs = append(c.errs, field.Invalid(mp, ruleValue(r), "messageExpression instantiation failed: "+err.Error()))
		return
	}
	est, err := env.EstimateCost(ast, costs)
	if err != nil {
		c.errs = append(c.errs, field.InternalError(mp, fmt.Errorf("cost estimation failed for messageExpression: %w", err)))
		return
	}
	if est.Max > staticCostLimit {
		c.errs = append(c.errs, field.Forbidden(mp, costMessage("estimated messageExpression cost", est.Max, staticCostLimit)))
	}
	c.total.observe(mp, est.Max)
	if n := len(c.estimates); n > 0 && c.estimates[n-1].path == rp.String() {
		c.estimates[n-1].message = &est.Max
	}
	cr.msgProg = prog
}

// programOptions are the run-time options of a rule: the per-call
// cost limit, with the library's costs tracked.
func programOptions(costs *ruleCosts) []cel.ProgramOption {
	return []cel.ProgramOption{
		cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostLimit(perCallLimit),
		cel.CostTracking(costs),
		cel.CostTrackerOptions(cost.TrackerPresenceTestHasCost(false)),
		cel.InterruptCheckFrequency(100),
	}
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

// ruleValue is a rule as the value of a CRD validation error: upstream
// validates the internal apiextensions.ValidationRule, which field.Error
// marshals with its Go field names, nothing omitted (kube-apiserver
// v1.37.2 answers {"Rule":"self.x ==","Message":"m","MessageExpression":"",
// "Reason":null,"FieldPath":"","OptionalOldSelf":null}).
func ruleValue(r apiextensionsv1.ValidationRule) any {
	var out apiextensions.ValidationRule
	if err := apiextensionsv1.Convert_v1_ValidationRule_To_apiextensions_ValidationRule(&r, &out, nil); err != nil {
		return r
	}
	return out
}
