package validating

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission/celauthz"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	kcel "github.com/kapi-dev/kapi/pkg/apiextensions/cel"
)

// StatusWriter writes a policy's status (through its status subresource).
type StatusWriter interface {
	UpdateStatus(ctx context.Context, policy *arv1.ValidatingAdmissionPolicy) error
}

// TypeCheck type-checks a policy's expressions against the kinds its
// matchConstraints name (and its paramKind), as upstream's type checker
// does, and returns the problems with the path of their field
// (status.typeChecking.expressionWarnings), each message
// "<group/version, Kind=kind>: <error>".
//
// Upstream types objects from the kinds' OpenAPI schemas; kapi types
// built-in kinds from their Go types (k8s.io/api, field names from their
// json tags, through cel-go's native types). Fields whose Go types have
// their own JSON forms (metav1.Time, resource.Quantity,
// intstr.IntOrString, ...) are not the strings CEL sees at run time, so
// errors involving them are not reported. Custom resources, wildcard
// rules and kinds not known to the built-in scheme are not type-checked
// (dyn), as upstream skips kinds it has no schema for.
func TypeCheck(p *arv1.ValidatingAdmissionPolicy) []arv1.ExpressionWarning {
	kinds := matchedKinds(p.Spec.MatchConstraints)
	if len(kinds) == 0 {
		return nil
	}
	var paramType reflect.Type
	if pk := p.Spec.ParamKind; pk != nil {
		if gv, err := schema.ParseGroupVersion(pk.APIVersion); err == nil {
			if t, ok := scheme.Scheme.AllKnownTypes()[gv.WithKind(pk.Kind)]; ok {
				paramType = t
			}
		}
	}
	var out []arv1.ExpressionWarning
	check := func(path, expr string, want *types.Type) {
		var msgs []string
		for _, k := range kinds {
			env, err := typedEnv(k.typ, paramType)
			if err != nil {
				continue
			}
			ast, iss := env.Compile(expr)
			if iss.Err() != nil {
				if msg := iss.Err().Error(); !involvesSpecialType(msg) {
					msgs = append(msgs, fmt.Sprintf("%s: %s", k.gvk, msg))
				}
				continue
			}
			if want != nil {
				if t := ast.OutputType(); !t.IsExactType(want) && !t.IsExactType(types.DynType) && !involvesSpecialType(t.String()) {
					msgs = append(msgs, fmt.Sprintf("%s: must evaluate to %s but got %s", k.gvk, want, t))
				}
			}
		}
		if len(msgs) > 0 {
			out = append(out, arv1.ExpressionWarning{FieldRef: path, Warning: strings.Join(msgs, "\n")})
		}
	}
	for i, v := range p.Spec.Validations {
		check(fmt.Sprintf("spec.validations[%d].expression", i), v.Expression, wantBool)
		if v.MessageExpression != "" {
			check(fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression, wantString)
		}
	}
	for i, a := range p.Spec.AuditAnnotations {
		check(fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), a.ValueExpression, nil)
	}
	return out
}

// specialTypes are Go types whose JSON form is a string or number, not
// the struct cel-go's native types see.
var specialTypes = []string{"v1.Time", "v1.MicroTime", "v1.Duration", "resource.Quantity", "intstr.IntOrString", "runtime.RawExtension", "v1.FieldsV1", "v1.JSON"}

func involvesSpecialType(msg string) bool {
	return slices.ContainsFunc(specialTypes, func(t string) bool { return strings.Contains(msg, t) })
}

type matchedKind struct {
	gvk schema.GroupVersionKind
	typ reflect.Type
}

// matchedKinds are the built-in kinds of the rules' exact groups,
// versions and resources (no wildcards, no subresources).
func matchedKinds(m *arv1.MatchResources) []matchedKind {
	if m == nil {
		return nil
	}
	known := scheme.Scheme.AllKnownTypes()
	var out []matchedKind
	seen := map[schema.GroupVersionKind]bool{}
	for _, r := range m.ResourceRules {
		for _, g := range r.APIGroups {
			for _, v := range r.APIVersions {
				for _, res := range r.Resources {
					if g == "*" || v == "*" || strings.Contains(res, "*") || strings.Contains(res, "/") {
						continue
					}
					for gvk, t := range known {
						if gvk.Group != g || gvk.Version != v || strings.HasSuffix(gvk.Kind, "List") || seen[gvk] {
							continue
						}
						plural, _ := meta.UnsafeGuessKindToResource(gvk)
						if plural.Resource == res {
							seen[gvk] = true
							out = append(out, matchedKind{gvk, t})
						}
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b matchedKind) int { return strings.Compare(a.gvk.String(), b.gvk.String()) })
	return out
}

var typedEnvs sync.Map // [2]reflect.Type -> *cel.Env

// typedEnv is [Env] with object and oldObject (and params, when its kind
// is built-in) typed.
func typedEnv(obj, param reflect.Type) (*cel.Env, error) {
	key := [2]reflect.Type{obj, param}
	if e, ok := typedEnvs.Load(key); ok {
		return e.(*cel.Env), nil
	}
	objName := nativeName(obj)
	natives := []any{reflect.PointerTo(obj)}
	paramType := cel.DynType
	if param != nil {
		natives = append(natives, reflect.PointerTo(param))
		paramType = cel.ObjectType(nativeName(param))
	}
	natives = append(natives, ext.ParseStructTag("json"))
	opts := append(append(kcel.EnvOptions(), celauthz.EnvOptions()...),
		ext.NativeTypes(natives...),
		cel.Variable(varObject, cel.ObjectType(objName)),
		cel.Variable(varOldObject, cel.ObjectType(objName)),
		cel.Variable(varRequest, cel.DynType),
		cel.Variable(varParams, paramType),
		cel.Variable(varNamespaceObject, cel.DynType),
		cel.Variable(varVariables, cel.MapType(cel.StringType, cel.DynType)),
	)
	e, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, err
	}
	typedEnvs.Store(key, e)
	return e, nil
}

// nativeName is cel-go's name of a native type: <last package path
// element>.<type name>.
func nativeName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	return pkg + "." + t.Name()
}

// writeTypeChecking writes the type-checking status of a policy whose
// generation it does not reflect yet (upstream's status controller:
// nothing when generation <= observedGeneration). A conflict is left to
// the next watch event of the policy.
func writeTypeChecking(ctx context.Context, w StatusWriter, p *arv1.ValidatingAdmissionPolicy, logger *slog.Logger) {
	if p.Generation <= p.Status.ObservedGeneration {
		return
	}
	upd := p.DeepCopy()
	upd.Status.ObservedGeneration = p.Generation
	upd.Status.TypeChecking = &arv1.TypeChecking{ExpressionWarnings: TypeCheck(p)}
	if err := w.UpdateStatus(ctx, upd); err != nil && ctx.Err() == nil {
		logger.Debug("validating admission policy: status not written", "policy", p.Name, "err", err)
	}
}
