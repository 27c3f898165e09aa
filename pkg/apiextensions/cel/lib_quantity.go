package cel

import (
	"errors"
	"fmt"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"
)

// quantityType is the CEL type of a quantity, named as upstream.
var quantityType = cel.ObjectType("kubernetes.Quantity")

// quantityValue is a resource.Quantity as a CEL value.
type quantityValue struct {
	q *resource.Quantity
}

// ConvertToNative implements ref.Val.
func (v quantityValue) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.q).AssignableTo(t) {
		return v.q, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.q.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'Quantity' to '%v'", t)
}

// ConvertToType implements ref.Val.
func (v quantityValue) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case quantityType:
		return v
	case types.TypeType:
		return quantityType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", quantityType, t)
}

// Equal implements ref.Val: equal amounts, whatever their format.
func (v quantityValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(quantityValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.q.Equal(*o.q))
}

// Type implements ref.Val.
func (quantityValue) Type() ref.Type { return quantityType }

// Value implements ref.Val.
func (v quantityValue) Value() any { return v.q }

// quantityLibrary is upstream's quantity library: quantity and
// isQuantity parse resource quantities; sign(q) (a function, not a
// method), isInteger, asInteger,
// asApproximateFloat, add, sub, isLessThan,
// isGreaterThan and compareTo work on them.
func quantityLibrary() cel.EnvOption {
	return cel.Lib(quantityLib{})
}

type quantityLib struct{}

func (quantityLib) LibraryName() string { return "kubernetes.quantity" }

func (quantityLib) ProgramOptions() []cel.ProgramOption { return nil }

func (quantityLib) CompileOptions() []cel.EnvOption {
	q, i := quantityType, cel.IntType
	qq := []*cel.Type{q, q}
	return []cel.EnvOption{
		cel.Function("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, q, cel.UnaryBinding(stringToQuantity))),
		cel.Function("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(isQuantity))),
		cel.Function("sign",
			cel.Overload("quantity_sign", []*cel.Type{q}, i, cel.UnaryBinding(quantityUnary(func(x *resource.Quantity) ref.Val { return types.Int(x.Sign()) })))),
		cel.Function("isGreaterThan", cel.MemberOverload("quantity_is_greater_than", qq, cel.BoolType, cel.BinaryBinding(quantityCmp(func(c int) ref.Val { return types.Bool(c == 1) })))),
		cel.Function("isLessThan", cel.MemberOverload("quantity_is_less_than", qq, cel.BoolType, cel.BinaryBinding(quantityCmp(func(c int) ref.Val { return types.Bool(c == -1) })))),
		cel.Function("compareTo", cel.MemberOverload("quantity_compare_to", qq, i, cel.BinaryBinding(quantityCmp(func(c int) ref.Val { return types.Int(c) })))),
		cel.Function("asApproximateFloat", cel.MemberOverload("quantity_get_float", []*cel.Type{q}, cel.DoubleType,
			cel.UnaryBinding(quantityUnary(func(x *resource.Quantity) ref.Val { return types.Double(x.AsApproximateFloat64()) })))),
		cel.Function("asInteger", cel.MemberOverload("quantity_get_int", []*cel.Type{q}, i, cel.UnaryBinding(quantityUnary(quantityAsInteger)))),
		cel.Function("isInteger", cel.MemberOverload("quantity_is_integer", []*cel.Type{q}, cel.BoolType,
			cel.UnaryBinding(quantityUnary(func(x *resource.Quantity) ref.Val { _, ok := x.AsInt64(); return types.Bool(ok) })))),
		cel.Function("add",
			cel.MemberOverload("quantity_add", qq, q, cel.BinaryBinding(quantityArith(func(x, y *resource.Quantity) { x.Add(*y) }))),
			cel.MemberOverload("quantity_add_int", []*cel.Type{q, i}, q, cel.BinaryBinding(quantityArith(func(x, y *resource.Quantity) { x.Add(*y) })))),
		cel.Function("sub",
			cel.MemberOverload("quantity_sub", qq, q, cel.BinaryBinding(quantityArith(func(x, y *resource.Quantity) { x.Sub(*y) }))),
			cel.MemberOverload("quantity_sub_int", []*cel.Type{q, i}, q, cel.BinaryBinding(quantityArith(func(x, y *resource.Quantity) { x.Sub(*y) })))),
	}
}

func quantityOf(v ref.Val) (*resource.Quantity, ref.Val) {
	q, ok := v.(quantityValue)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(v)
	}
	return q.q, nil
}

func stringToQuantity(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	q, err := resource.ParseQuantity(string(s))
	if err != nil {
		return types.WrapErr(err)
	}
	return quantityValue{q: &q}
}

func isQuantity(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	_, err := resource.ParseQuantity(string(s))
	return types.Bool(err == nil)
}

func quantityUnary(f func(*resource.Quantity) ref.Val) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		q, err := quantityOf(v)
		if err != nil {
			return err
		}
		return f(q)
	}
}

func quantityAsInteger(q *resource.Quantity) ref.Val {
	n, ok := q.AsInt64()
	if !ok {
		return types.WrapErr(errors.New("cannot convert value to integer"))
	}
	return types.Int(n)
}

func quantityCmp(f func(int) ref.Val) func(a, b ref.Val) ref.Val {
	return func(a, b ref.Val) ref.Val {
		x, err := quantityOf(a)
		if err != nil {
			return err
		}
		y, err := quantityOf(b)
		if err != nil {
			return err
		}
		return f(x.Cmp(*y))
	}
}

// quantityArith applies f to a copy of a and b, a quantity or an int.
func quantityArith(f func(x, y *resource.Quantity)) func(a, b ref.Val) ref.Val {
	return func(a, b ref.Val) ref.Val {
		x, err := quantityOf(a)
		if err != nil {
			return err
		}
		var y *resource.Quantity
		if n, ok := b.(types.Int); ok {
			y = resource.NewQuantity(int64(n), resource.DecimalExponent)
		} else if y, err = quantityOf(b); err != nil {
			return err
		}
		out := x.DeepCopy()
		f(&out, y)
		return quantityValue{q: &out}
	}
}
