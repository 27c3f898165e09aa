package resource

import (
	"fmt"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kcel "github.com/kapi-dev/kapi/pkg/apiextensions/cel"
)

// The environment of device selectors, as upstream's DRA CEL compiler
// (k8s.io/dynamic-resource-allocation/cel, compile.go, v1.37): the
// Kubernetes base environment (pkg/apiextensions/cel's libraries), the
// cel.bind macro, and one variable, device, of the object type
// kubernetes.DRADevice:
//
//	driver                   string (at most 63 characters)
//	attributes               map(domain, map(id, any)): bool, int, string or semver values
//	capacity                 map(domain, map(id, kubernetes.Quantity))
//	allowMultipleAllocations bool (consumable capacity)
const deviceTypeName = "kubernetes.DRADevice"

var (
	// Attribute values are of the "any" type (cel.AnyType), as upstream's
	// apiservercel.AnyType: bool, int, string or semver at run time.
	attributesType = cel.MapType(cel.StringType, cel.MapType(cel.StringType, cel.AnyType))
	capacityType   = cel.MapType(cel.StringType, cel.MapType(cel.StringType, cel.ObjectType("kubernetes.Quantity")))
	deviceFields   = map[string]*types.Type{
		"driver":                   cel.StringType,
		"attributes":               attributesType,
		"capacity":                 capacityType,
		"allowMultipleAllocations": cel.BoolType,
	}
)

// deviceProvider adds kubernetes.DRADevice to the base type provider.
type deviceProvider struct{ base types.Provider }

func (p deviceProvider) EnumValue(name string) ref.Val         { return p.base.EnumValue(name) }
func (p deviceProvider) FindIdent(name string) (ref.Val, bool) { return p.base.FindIdent(name) }
func (p deviceProvider) NewValue(n string, f map[string]ref.Val) ref.Val {
	return p.base.NewValue(n, f)
}

func (p deviceProvider) FindStructType(name string) (*types.Type, bool) {
	if name == deviceTypeName {
		return types.NewTypeTypeWithParam(cel.ObjectType(deviceTypeName)), true
	}
	return p.base.FindStructType(name)
}

func (p deviceProvider) FindStructFieldNames(name string) ([]string, bool) {
	if name != deviceTypeName {
		return p.base.FindStructFieldNames(name)
	}
	out := make([]string, 0, len(deviceFields))
	for f := range deviceFields {
		out = append(out, f)
	}
	return out, true
}

func (p deviceProvider) FindStructFieldType(name, fieldName string) (*types.FieldType, bool) {
	if name != deviceTypeName {
		return p.base.FindStructFieldType(name, fieldName)
	}
	t, ok := deviceFields[fieldName]
	if !ok {
		return nil, false
	}
	return &types.FieldType{Type: t}, true
}

// deviceSizes bounds the sizes of the values reachable from device, from
// the API's limits (upstream's sizeEstimator): the driver name, the
// attribute and capacity maps (32 entries per device), their domains (63)
// and identifiers (32), and attribute values (64).
type deviceSizes struct{}

func (deviceSizes) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	path := n.Path()
	if len(path) < 2 || path[0] != "device" {
		return nil
	}
	const entries = resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice
	size := func(max uint64) *cost.SizeEstimate { return &cost.SizeEstimate{Min: 0, Max: max} }
	inner := func(value *cost.SizeEstimate) *cost.SizeEstimate {
		return &cost.SizeEstimate{Min: 0, Max: entries, Key: size(resourcev1.DeviceMaxIDLength), Elem: value}
	}
	var cur *cost.SizeEstimate
	switch path[1] {
	case "driver":
		cur = size(resourcev1.DriverNameMaxLength)
	case "attributes":
		cur = &cost.SizeEstimate{Min: 0, Max: entries, Key: size(resourcev1.DeviceMaxDomainLength), Elem: inner(size(resourcev1.DeviceAttributeMaxValueLength))}
	case "capacity":
		cur = &cost.SizeEstimate{Min: 0, Max: entries, Key: size(resourcev1.DeviceMaxDomainLength), Elem: inner(size(1))}
	default:
		return nil
	}
	for _, p := range path[2:] {
		switch p {
		case "@keys":
			cur = cur.Key
		default: // "@values", "@items" or a key
			cur = cur.Elem
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

func (deviceSizes) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

var (
	selectorEnvOnce sync.Once
	selectorEnv     *cel.Env
	selectorEnvErr  error
)

func deviceSelectorEnv() (*cel.Env, error) {
	selectorEnvOnce.Do(func() {
		base, err := cel.NewEnv(kcel.EnvOptions()...)
		if err != nil {
			selectorEnvErr = err
			return
		}
		selectorEnv, selectorEnvErr = base.Extend(
			cel.CustomTypeProvider(deviceProvider{base: base.CELTypeProvider()}),
			cel.Variable("device", cel.ObjectType(deviceTypeName)),
			ext.Bindings(ext.BindingsVersion(0)),
		)
	})
	return selectorEnv, selectorEnvErr
}

// CompileDeviceSelector compiles a device selector expression as
// upstream's CompileCELExpression: a compile error is
// "compilation failed: <issues>", a result that is not bool (or any)
// "must evaluate to bool or the unknown type, not <type>"; it returns the
// estimated worst-case cost.
func CompileDeviceSelector(expression string) (maxCost uint64, detail string, internal error) {
	env, err := deviceSelectorEnv()
	if err != nil {
		return 0, "", fmt.Errorf("unexpected error loading CEL environment: %w", err)
	}
	ast, issues := env.Compile(expression)
	if issues != nil && issues.Err() != nil {
		return 0, "compilation failed: " + kcel.IssuesString(issues), nil
	}
	if out := ast.OutputType(); !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.AnyType) {
		return 0, fmt.Sprintf("must evaluate to %v or the unknown type, not %v", cel.BoolType.String(), out.String()), nil
	}
	est, err := env.EstimateCost(ast, kcel.CostEstimator(deviceSizes{}))
	if err != nil {
		return 0, "", fmt.Errorf("cost estimation failed: %w", err)
	}
	return est.Max, "", nil
}

// validateCELSelector checks one selector expression as upstream's
// validateCELSelector (pkg/apis/resource/validation): too long is TooLong
// (not compiled), a compile error Invalid with its message, a cost over
// CELSelectorExpressionMaxCost Forbidden.
func validateCELSelector(expression string, p *field.Path) field.ErrorList {
	if len(expression) > resourcev1.CELSelectorExpressionMaxLength {
		return field.ErrorList{field.TooLong(p, "" /*unused*/, resourcev1.CELSelectorExpressionMaxLength)}
	}
	maxCost, detail, err := CompileDeviceSelector(expression)
	switch {
	case err != nil:
		return field.ErrorList{field.InternalError(p, err)}
	case detail != "":
		return field.ErrorList{field.Invalid(p, expression, detail)}
	case maxCost > resourcev1.CELSelectorExpressionMaxCost:
		return field.ErrorList{field.Forbidden(p, "too complex, exceeds cost limit")}
	}
	return nil
}
