package apiextensions

import (
	"errors"
	"fmt"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"
)

// celQuantityType is the CEL type of a quantity, named as upstream.
var celQuantityType = cel.ObjectType("kubernetes.Quantity")

// celQuantity is a resource.Quantity as a CEL value.
type celQuantity struct {
	q *resource.Quantity
}

// ConvertToNative implements ref.Val.
func (v celQuantity) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.q).AssignableTo(t) {
		return v.q, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.q.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'Quantity' to '%v'", t)
}

// ConvertToType implements ref.Val.
func (v celQuantity) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case celQuantityType:
		return v
	case types.TypeType:
		return celQuantityType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", celQuantityType, t)
}

// Equal implements ref.Val: equal amounts, whatever their format.
func (v celQuantity) Equal(other ref.Val) ref.Val {
	o, ok := other.(celQuantity)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.q.Equal(*o.q))
}

// Type implements ref.Val.
func (celQuantity) Type() ref.Type { return celQuantityType }

// Value implements ref.Val.
func (v celQuantity) Value() any { return v.q }

// celQuantityLibrary is upstream's quantity library: quantity and
// isQuantity parse resource quantities; sign, isInteger, asInteger,
// asApproximateFloat, add, sub, mul, isLessThan,
// isGreaterThan and compareTo work on them.
func celQuantityLibrary() cel.EnvOption {
	return cel.Lib(celQuantityLib{})
}

type celQuantityLib struct{}

func (celQuantityLib) LibraryName() string { return "kubernetes.quantity" }

func (celQuantityLib) ProgramOptions() []cel.ProgramOption { return nil }

func (celQuantityLib) CompileOptions() []cel.EnvOption {
	q, i := celQuantityType, cel.IntType
	qq := []*cel.Type{q, q}
	return []cel.EnvOption{
		cel.Function("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, q, cel.UnaryBinding(celStringToQuantity))),
		cel.Function("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(celIsQuantity))),
		cel.Function("sign",
			cel.Overload("quantity_sign", []*cel.Type{q}, i, cel.UnaryBinding(celQuantityUnary(func(x *resource.Quantity) ref.Val { return types.Int(x.Sign()) }))),
			cel.MemberOverload("quantity_member_sign", []*cel.Type{q}, i, cel.UnaryBinding(celQuantityUnary(func(x *resource.Quantity) ref.Val { return types.Int(x.Sign()) })))),
		cel.Function("isGreaterThan", cel.MemberOverload("quantity_is_greater_than", qq, cel.BoolType, cel.BinaryBinding(celQuantityCmp(func(c int) ref.Val { return types.Bool(c == 1) })))),
		cel.Function("isLessThan", cel.MemberOverload("quantity_is_less_than", qq, cel.BoolType, cel.BinaryBinding(celQuantityCmp(func(c int) ref.Val { return types.Bool(c == -1) })))),
		cel.Function("compareTo", cel.MemberOverload("quantity_compare_to", qq, i, cel.BinaryBinding(celQuantityCmp(func(c int) ref.Val { return types.Int(c) })))),
		cel.Function("asApproximateFloat", cel.MemberOverload("quantity_get_float", []*cel.Type{q}, cel.DoubleType,
			cel.UnaryBinding(celQuantityUnary(func(x *resource.Quantity) ref.Val { return types.Double(x.AsApproximateFloat64()) })))),
		cel.Function("asInteger", cel.MemberOverload("quantity_get_int", []*cel.Type{q}, i, cel.UnaryBinding(celQuantityUnary(celQuantityAsInteger)))),
		cel.Function("isInteger", cel.MemberOverload("quantity_is_integer", []*cel.Type{q}, cel.BoolType,
			cel.UnaryBinding(celQuantityUnary(func(x *resource.Quantity) ref.Val { _, ok := x.AsInt64(); return types.Bool(ok) })))),
		cel.Function("add",
			cel.MemberOverload("quantity_add", qq, q, cel.BinaryBinding(celQuantityArith(func(x, y *resource.Quantity) { x.Add(*y) }))),
			cel.MemberOverload("quantity_add_int", []*cel.Type{q, i}, q, cel.BinaryBinding(celQuantityArith(func(x, y *resource.Quantity) { x.Add(*y) })))),
		cel.Function("sub",
			cel.MemberOverload("quantity_sub", qq, q, cel.BinaryBinding(celQuantityArith(func(x, y *resource.Quantity) { x.Sub(*y) }))),
			cel.MemberOverload("quantity_sub_int", []*cel.Type{q, i}, q, cel.BinaryBinding(celQuantityArith(func(x, y *resource.Quantity) { x.Sub(*y) })))),
		cel.Function("mul", cel.MemberOverload("quantity_multiply_int", []*cel.Type{q, i}, q, cel.BinaryBinding(celQuantityMul))),
	}
}

func celQuantityOf(v ref.Val) (*resource.Quantity, ref.Val) {
	q, ok := v.(celQuantity)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(v)
	}
	return q.q, nil
}

func celStringToQuantity(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	q, err := resource.ParseQuantity(string(s))
	if err != nil {
		return types.WrapErr(err)
	}
	return celQuantity{q: &q}
}

func celIsQuantity(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	_, err := resource.ParseQuantity(string(s))
	return types.Bool(err == nil)
}

func celQuantityUnary(f func(*resource.Quantity) ref.Val) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		q, err := celQuantityOf(v)
		if err != nil {
			return err
		}
		return f(q)
	}
}

func celQuantityAsInteger(q *resource.Quantity) ref.Val {
	n, ok := q.AsInt64()
	if !ok {
		return types.WrapErr(errors.New("cannot convert value to integer"))
	}
	return types.Int(n)
}

func celQuantityCmp(f func(int) ref.Val) func(a, b ref.Val) ref.Val {
	return func(a, b ref.Val) ref.Val {
		x, err := celQuantityOf(a)
		if err != nil {
			return err
		}
		y, err := celQuantityOf(b)
		if err != nil {
			return err
		}
		return f(x.Cmp(*y))
	}
}

// celQuantityArith applies f to a copy of a and b, a quantity or an int.
func celQuantityArith(f func(x, y *resource.Quantity)) func(a, b ref.Val) ref.Val {
	return func(a, b ref.Val) ref.Val {
		x, err := celQuantityOf(a)
		if err != nil {
			return err
		}
		var y *resource.Quantity
		if n, ok := b.(types.Int); ok {
			y = resource.NewQuantity(int64(n), resource.DecimalExponent)
		} else if y, err = celQuantityOf(b); err != nil {
			return err
		}
		out := x.DeepCopy()
		f(&out, y)
		return celQuantity{q: &out}
	}
}

func celQuantityMul(a, b ref.Val) ref.Val {
	x, err := celQuantityOf(a)
	if err != nil {
		return err
	}
	n, ok := b.(types.Int)
	if !ok {
		return types.MaybeNoSuchOverloadErr(b)
	}
	out := x.DeepCopy()
	out.Mul(int64(n))
	return celQuantity{q: &out}
}
