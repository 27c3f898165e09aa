package celauthz

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Variable names, as upstream declares them.
const (
	VarAuthorizer      = "authorizer"
	VarRequestResource = "authorizer.requestResource"
)

// The library's types, with upstream's names (they show in type errors).
var (
	AuthorizerType    = cel.ObjectType("kubernetes.authorization.Authorizer")
	PathCheckType     = cel.ObjectType("kubernetes.authorization.PathCheck")
	GroupCheckType    = cel.ObjectType("kubernetes.authorization.GroupCheck")
	ResourceCheckType = cel.ObjectType("kubernetes.authorization.ResourceCheck")
	DecisionType      = cel.ObjectType("kubernetes.authorization.Decision")
)

// EnvOptions declare the library and its two variables.
func EnvOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Types(AuthorizerType, PathCheckType, GroupCheckType, ResourceCheckType, DecisionType),
		cel.Function("path", cel.MemberOverload("authorizer_path",
			[]*cel.Type{AuthorizerType, cel.StringType}, PathCheckType, cel.BinaryBinding(authorizerPath))),
		cel.Function("group", cel.MemberOverload("authorizer_group",
			[]*cel.Type{AuthorizerType, cel.StringType}, GroupCheckType, cel.BinaryBinding(authorizerGroup))),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceaccount",
			[]*cel.Type{AuthorizerType, cel.StringType, cel.StringType}, AuthorizerType, cel.FunctionBinding(authorizerServiceAccount))),
		cel.Function("resource", cel.MemberOverload("groupcheck_resource",
			[]*cel.Type{GroupCheckType, cel.StringType}, ResourceCheckType, cel.BinaryBinding(groupCheckResource))),
		cel.Function("subresource", cel.MemberOverload("resourcecheck_subresource",
			[]*cel.Type{ResourceCheckType, cel.StringType}, ResourceCheckType, cel.BinaryBinding(resourceSetter(func(r *resourceCheck, s string) { r.subresource = s })))),
		cel.Function("namespace", cel.MemberOverload("resourcecheck_namespace",
			[]*cel.Type{ResourceCheckType, cel.StringType}, ResourceCheckType, cel.BinaryBinding(resourceSetter(func(r *resourceCheck, s string) { r.namespace = s })))),
		cel.Function("name", cel.MemberOverload("resourcecheck_name",
			[]*cel.Type{ResourceCheckType, cel.StringType}, ResourceCheckType, cel.BinaryBinding(resourceSetter(func(r *resourceCheck, s string) { r.name = s })))),
		// The selectors (upstream's AuthzSelectors library, in the base
		// environment since v1.31); their cost is the shared estimator's.
		cel.Function("fieldSelector", cel.MemberOverload("authorizer_fieldselector",
			[]*cel.Type{ResourceCheckType, cel.StringType}, ResourceCheckType, cel.BinaryBinding(resourceSetter(func(r *resourceCheck, s string) { r.fieldSelector = s })))),
		cel.Function("labelSelector", cel.MemberOverload("authorizer_labelselector",
			[]*cel.Type{ResourceCheckType, cel.StringType}, ResourceCheckType, cel.BinaryBinding(resourceSetter(func(r *resourceCheck, s string) { r.labelSelector = s })))),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{PathCheckType, cel.StringType}, DecisionType, cel.BinaryBinding(pathCheckCheck)),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{ResourceCheckType, cel.StringType}, DecisionType, cel.BinaryBinding(resourceCheckCheck))),
		cel.Function("errored", cel.MemberOverload("decision_errored",
			[]*cel.Type{DecisionType}, cel.BoolType, cel.UnaryBinding(decisionGetter(func(d decision) ref.Val { return types.Bool(d.err != nil) })))),
		cel.Function("error", cel.MemberOverload("decision_error",
			[]*cel.Type{DecisionType}, cel.StringType, cel.UnaryBinding(decisionGetter(func(d decision) ref.Val {
				if d.err == nil {
					return types.String("")
				}
				return types.String(d.err.Error())
			})))),
		cel.Function("allowed", cel.MemberOverload("decision_allowed",
			[]*cel.Type{DecisionType}, cel.BoolType, cel.UnaryBinding(decisionGetter(func(d decision) ref.Val { return types.Bool(d.decision == authorizer.DecisionAllow) })))),
		cel.Function("reason", cel.MemberOverload("decision_reason",
			[]*cel.Type{DecisionType}, cel.StringType, cel.UnaryBinding(decisionGetter(func(d decision) ref.Val { return types.String(d.reason) })))),
		cel.Variable(VarAuthorizer, AuthorizerType),
		cel.Variable(VarRequestResource, ResourceCheckType),
	}
}

// Values are the two variables' values for one admission request: checks
// run for a's user against az, with ctx (the request's context). Decisions
// are cached for the request, as upstream's admission dispatchers wrap the
// authorizer in a per-request cache: the same check made by several
// expressions is authorized once.
func Values(ctx context.Context, az authorizer.Authorizer, a *admission.Attributes) (authz, requestResource ref.Val) {
	u := a.User
	if u == nil {
		u = &user.Info{}
	}
	av := authorizerVal{ctx: ctx, az: &cachingAuthorizer{az: az}, user: u}
	rc := resourceCheck{
		group: groupCheck{authorizer: av, group: a.Resource.Group}, resource: a.Resource.Resource,
		subresource: a.Subresource, namespace: a.Namespace, name: a.Name,
	}
	return av, rc
}

// Bind adds the variables' values (see [Values]) to an activation map;
// with a nil authorizer it adds nothing, so that an expression using them
// fails to evaluate (no such attribute), as upstream without an
// authorizer.
func Bind(act map[string]any, ctx context.Context, az authorizer.Authorizer, a *admission.Attributes) {
	if az == nil {
		return
	}
	act[VarAuthorizer], act[VarRequestResource] = Values(ctx, az, a)
}

// cachingAuthorizer remembers decisions for identical attributes (one
// admission request).
type cachingAuthorizer struct {
	az    authorizer.Authorizer
	mu    sync.Mutex
	cache map[string]decision
}

func (c *cachingAuthorizer) authorize(ctx context.Context, a authorizer.Attributes) decision {
	key := fmt.Sprintf("%q|%q|%q|%v|%v|%q|%q|%q|%q|%q|%q|%q|%q|%v|%v|%v|%v", a.User.Name, a.User.UID, a.User.Groups, a.User.Extra,
		a.ResourceRequest, a.Verb, a.Namespace, a.APIGroup, a.APIVersion, a.Resource, a.Subresource, a.Name, a.Path,
		a.FieldSelector, a.FieldSelectorErr, a.LabelSelector, a.LabelSelectorErr)
	c.mu.Lock()
	d, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return d
	}
	dec, reason, err := c.az.Authorize(ctx, a)
	d = decision{decision: dec, reason: reason, err: err}
	c.mu.Lock()
	if c.cache == nil {
		c.cache = map[string]decision{}
	}
	c.cache[key] = d
	c.mu.Unlock()
	return d
}

type authorizerVal struct {
	ctx  context.Context
	az   *cachingAuthorizer
	user *user.Info
}

type pathCheck struct {
	authorizer authorizerVal
	path       string
}

type groupCheck struct {
	authorizer authorizerVal
	group      string
}

type resourceCheck struct {
	group                        groupCheck
	resource, subresource        string
	namespace, name              string
	fieldSelector, labelSelector string // raw, parsed by check()
}

type decision struct {
	decision authorizer.Decision
	reason   string
	err      error
}

func authorizerPath(recv, arg ref.Val) ref.Val {
	az, ok := recv.(authorizerVal)
	p, ok2 := arg.(types.String)
	if !ok || !ok2 {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	if strings.TrimSpace(string(p)) == "" {
		return types.NewErr("path must not be empty")
	}
	return pathCheck{authorizer: az, path: string(p)}
}

func authorizerGroup(recv, arg ref.Val) ref.Val {
	az, ok := recv.(authorizerVal)
	g, ok2 := arg.(types.String)
	if !ok || !ok2 {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	return groupCheck{authorizer: az, group: string(g)}
}

// authorizerServiceAccount checks as the service account's user: its
// name and the two service account groups (upstream's
// serviceaccount.ServiceAccountInfo.UserInfo without pod or node).
func authorizerServiceAccount(args ...ref.Val) ref.Val {
	if len(args) != 3 {
		return types.NoSuchOverloadErr()
	}
	az, ok := args[0].(authorizerVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	ns, ok := args[1].(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[1])
	}
	name, ok := args[2].(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[2])
	}
	// Upstream validates the name first.
	if errs := apimachineryvalidation.ValidateServiceAccountName(string(name), false); len(errs) > 0 {
		return types.NewErr("Invalid service account name")
	}
	if errs := apimachineryvalidation.ValidateNamespaceName(string(ns), false); len(errs) > 0 {
		return types.NewErr("Invalid service account namespace")
	}
	az.user = &user.Info{
		Name:   serviceaccount.MakeUsername(string(ns), string(name)),
		Groups: []string{serviceaccount.AllServiceAccountsGroup, serviceaccount.AllServiceAccountsGroup + ":" + string(ns)},
	}
	return az
}

func groupCheckResource(recv, arg ref.Val) ref.Val {
	g, ok := recv.(groupCheck)
	r, ok2 := arg.(types.String)
	if !ok || !ok2 {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	if strings.TrimSpace(string(r)) == "" {
		return types.NewErr("resource must not be empty")
	}
	return resourceCheck{group: g, resource: string(r)}
}

func resourceSetter(set func(*resourceCheck, string)) func(recv, arg ref.Val) ref.Val {
	return func(recv, arg ref.Val) ref.Val {
		r, ok := recv.(resourceCheck)
		s, ok2 := arg.(types.String)
		if !ok || !ok2 {
			return types.MaybeNoSuchOverloadErr(recv)
		}
		set(&r, string(s))
		return r
	}
}

func pathCheckCheck(recv, arg ref.Val) ref.Val {
	p, ok := recv.(pathCheck)
	verb, ok2 := arg.(types.String)
	if !ok || !ok2 {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	az := p.authorizer
	return az.az.authorize(az.ctx, authorizer.Attributes{User: az.user, Verb: string(verb), Path: p.path})
}

// resourceCheckCheck authorizes the verb on the resource, for every
// version ("*"), as upstream.
func resourceCheckCheck(recv, arg ref.Val) ref.Val {
	r, ok := recv.(resourceCheck)
	verb, ok2 := arg.(types.String)
	if !ok || !ok2 {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	az := r.group.authorizer
	a := authorizer.Attributes{
		User: az.user, Verb: string(verb), ResourceRequest: true,
		APIGroup: r.group.group, APIVersion: "*", Resource: r.resource, Subresource: r.subresource,
		Namespace: r.namespace, Name: r.name,
	}
	// A selector that does not parse is an error with no requirements
	// (the check is then as broad as without it); label requirements
	// keep the order they were written in (labels.ParseToRequirements),
	// as upstream's library.
	if r.fieldSelector != "" {
		a.FieldSelector, a.FieldSelectorErr = authorizer.ParseFieldSelector(r.fieldSelector)
	}
	if r.labelSelector != "" {
		if reqs, err := labels.ParseToRequirements(r.labelSelector); err != nil {
			a.LabelSelectorErr = err
		} else if len(reqs) > 0 {
			a.LabelSelector = reqs
		}
	}
	return az.az.authorize(az.ctx, a)
}

func decisionGetter(get func(decision) ref.Val) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		d, ok := v.(decision)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return get(d)
	}
}

// The values have methods only (no fields), as upstream's
// receiverOnlyObjectVal.

func (authorizerVal) Type() ref.Type                                { return AuthorizerType }
func (pathCheck) Type() ref.Type                                    { return PathCheckType }
func (groupCheck) Type() ref.Type                                   { return GroupCheckType }
func (resourceCheck) Type() ref.Type                                { return ResourceCheckType }
func (decision) Type() ref.Type                                     { return DecisionType }
func (v authorizerVal) Value() any                                  { return v }
func (v pathCheck) Value() any                                      { return v }
func (v groupCheck) Value() any                                     { return v }
func (v resourceCheck) Value() any                                  { return v }
func (v decision) Value() any                                       { return v }
func (v authorizerVal) Equal(o ref.Val) ref.Val                     { return equal(v, o) }
func (v pathCheck) Equal(o ref.Val) ref.Val                         { return equal(v, o) }
func (v groupCheck) Equal(o ref.Val) ref.Val                        { return equal(v, o) }
func (v resourceCheck) Equal(o ref.Val) ref.Val                     { return equal(v, o) }
func (v decision) Equal(o ref.Val) ref.Val                          { return equal(v, o) }
func (v authorizerVal) ConvertToNative(t reflect.Type) (any, error) { return convertNative(v, t) }
func (v pathCheck) ConvertToNative(t reflect.Type) (any, error)     { return convertNative(v, t) }
func (v groupCheck) ConvertToNative(t reflect.Type) (any, error)    { return convertNative(v, t) }
func (v resourceCheck) ConvertToNative(t reflect.Type) (any, error) { return convertNative(v, t) }
func (v decision) ConvertToNative(t reflect.Type) (any, error)      { return convertNative(v, t) }
func (v authorizerVal) ConvertToType(t ref.Type) ref.Val            { return convertType(v, t) }
func (v pathCheck) ConvertToType(t ref.Type) ref.Val                { return convertType(v, t) }
func (v groupCheck) ConvertToType(t ref.Type) ref.Val               { return convertType(v, t) }
func (v resourceCheck) ConvertToType(t ref.Type) ref.Val            { return convertType(v, t) }
func (v decision) ConvertToType(t ref.Type) ref.Val                 { return convertType(v, t) }

// equal: upstream's values compare with nothing (its
// receiverOnlyObjectVal.Equal answers no such overload for them).
func equal(_, o ref.Val) ref.Val { return types.MaybeNoSuchOverloadErr(o) }

func convertNative(v ref.Val, t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", v.Type().TypeName(), t)
}

func convertType(v ref.Val, t ref.Type) ref.Val {
	switch {
	case t.TypeName() == v.Type().TypeName():
		return v
	case t == types.TypeType:
		return v.Type().(ref.Val)
	}
	return types.NewErr("type conversion error from '%s' to '%s'", v.Type().TypeName(), t.TypeName())
}
