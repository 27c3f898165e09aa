package cel

import (
	"regexp"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// k8sLibrary is the part of the Kubernetes CEL libraries kapi ships:
// the list functions (isSorted, sum, min, max, indexOf, lastIndexOf) and
// the regex functions (find, findAll), with upstream's names, overloads
// and cost estimates. The url, quantity, ip/cidr, format and semver
// libraries are in lib_*.go; the image library is not provided.
func k8sLibrary() cel.EnvOption {
	return cel.Lib(k8sLib{})
}

type k8sLib struct{}

func (k8sLib) LibraryName() string { return "kapi.k8s" }

func (k8sLib) ProgramOptions() []cel.ProgramOption { return nil }

// comparableTypes may be sorted and have a min and max; summableTypes
// have a sum.
var (
	comparableTypes = []*cel.Type{cel.IntType, cel.UintType, cel.DoubleType, cel.BoolType, cel.DurationType, cel.TimestampType, cel.StringType, cel.BytesType}
	summableTypes   = []*cel.Type{cel.IntType, cel.UintType, cel.DoubleType, cel.DurationType}
)

func (k8sLib) CompileOptions() []cel.EnvOption {
	var isSorted, minO, maxO, sum []cel.FunctionOpt
	for _, t := range comparableTypes {
		n := overloadTypeName(t)
		isSorted = append(isSorted, cel.MemberOverload("list_"+n+"_is_sorted_bool", []*cel.Type{cel.ListType(t)}, cel.BoolType, cel.UnaryBinding(listIsSorted)))
		minO = append(minO, cel.MemberOverload("list_"+n+"_min_"+n, []*cel.Type{cel.ListType(t)}, t, cel.UnaryBinding(listExtreme(-1))))
		maxO = append(maxO, cel.MemberOverload("list_"+n+"_max_"+n, []*cel.Type{cel.ListType(t)}, t, cel.UnaryBinding(listExtreme(1))))
	}
	for _, t := range summableTypes {
		n := overloadTypeName(t)
		zero := zeroOf(t)
		sum = append(sum, cel.MemberOverload("list_"+n+"_sum_"+n, []*cel.Type{cel.ListType(t)}, t, cel.UnaryBinding(listSum(zero))))
	}
	a := cel.TypeParamType("A")
	return []cel.EnvOption{
		cel.Function("isSorted", isSorted...),
		cel.Function("min", minO...),
		cel.Function("max", maxO...),
		cel.Function("sum", sum...),
		cel.Function("indexOf", cel.MemberOverload("list_a_index_of_int", []*cel.Type{cel.ListType(a), a}, cel.IntType, cel.BinaryBinding(listIndexOf(false)))),
		cel.Function("lastIndexOf", cel.MemberOverload("list_a_last_index_of_int", []*cel.Type{cel.ListType(a), a}, cel.IntType, cel.BinaryBinding(listIndexOf(true)))),
		cel.Function("find", cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType}, cel.StringType, cel.BinaryBinding(find))),
		cel.Function("findAll",
			cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(cel.StringType),
				cel.BinaryBinding(func(s, re ref.Val) ref.Val { return findAll(s, re, types.Int(-1)) })),
			cel.MemberOverload("string_find_all_string_int", []*cel.Type{cel.StringType, cel.StringType, cel.IntType}, cel.ListType(cel.StringType),
				cel.FunctionBinding(func(args ...ref.Val) ref.Val { return findAll(args[0], args[1], args[2]) })),
		),
	}
}

// overloadTypeName names t in the overload IDs, as upstream ("duration",
// "timestamp", not their protobuf names).
func overloadTypeName(t *cel.Type) string {
	switch t {
	case cel.DurationType:
		return "duration"
	case cel.TimestampType:
		return "timestamp"
	}
	return t.String()
}

func zeroOf(t *cel.Type) ref.Val {
	switch t {
	case cel.IntType:
		return types.Int(0)
	case cel.UintType:
		return types.Uint(0)
	case cel.DoubleType:
		return types.Double(0)
	default:
		return types.Duration{}
	}
}

// listItems returns the items of a list value.
func listItems(v ref.Val) ([]ref.Val, ref.Val) {
	l, ok := v.(traits.Lister)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(v)
	}
	n := int(l.Size().(types.Int))
	out := make([]ref.Val, n)
	for i := range n {
		out[i] = l.Get(types.Int(i))
	}
	return out, nil
}

func compareValues(a, b ref.Val) (int, ref.Val) {
	c, ok := a.(traits.Comparer)
	if !ok {
		return 0, types.MaybeNoSuchOverloadErr(a)
	}
	r := c.Compare(b)
	n, ok := r.(types.Int)
	if !ok {
		return 0, r
	}
	return int(n), nil
}

func listIsSorted(v ref.Val) ref.Val {
	items, err := listItems(v)
	if err != nil {
		return err
	}
	for i := 1; i < len(items); i++ {
		c, err := compareValues(items[i-1], items[i])
		if err != nil {
			return err
		}
		if c > 0 {
			return types.False
		}
	}
	return types.True
}

// listExtreme is min (sign -1) or max (sign 1).
func listExtreme(sign int) func(ref.Val) ref.Val {
	name := "max"
	if sign < 0 {
		name = "min"
	}
	return func(v ref.Val) ref.Val {
		items, err := listItems(v)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return types.NewErr("%s called on empty list", name)
		}
		best := items[0]
		for _, it := range items[1:] {
			c, err := compareValues(it, best)
			if err != nil {
				return err
			}
			if c*sign > 0 {
				best = it
			}
		}
		return best
	}
}

func listSum(zero ref.Val) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		items, err := listItems(v)
		if err != nil {
			return err
		}
		acc := zero
		for _, it := range items {
			adder, ok := acc.(traits.Adder)
			if !ok {
				return types.MaybeNoSuchOverloadErr(acc)
			}
			acc = adder.Add(it)
			if types.IsError(acc) {
				return acc
			}
		}
		return acc
	}
}

func listIndexOf(last bool) func(list, x ref.Val) ref.Val {
	return func(list, x ref.Val) ref.Val {
		items, err := listItems(list)
		if err != nil {
			return err
		}
		for i := range items {
			j := i
			if last {
				j = len(items) - 1 - i
			}
			if items[j].Equal(x) == types.True {
				return types.Int(j)
			}
		}
		return types.Int(-1)
	}
}

func compileRegexp(re ref.Val) (*regexp.Regexp, ref.Val) {
	s, ok := re.(types.String)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(re)
	}
	r, err := regexp.Compile(string(s))
	if err != nil {
		return nil, types.WrapErr(err)
	}
	return r, nil
}

func find(s, re ref.Val) ref.Val {
	str, ok := s.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(s)
	}
	r, err := compileRegexp(re)
	if err != nil {
		return err
	}
	return types.String(r.FindString(string(str)))
}

func findAll(s, re, limit ref.Val) ref.Val {
	str, ok := s.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(s)
	}
	n, ok := limit.(types.Int)
	if !ok {
		return types.MaybeNoSuchOverloadErr(limit)
	}
	r, err := compileRegexp(re)
	if err != nil {
		return err
	}
	return types.DefaultTypeAdapter.NativeToValue(r.FindAllString(string(str), int(n)))
}
