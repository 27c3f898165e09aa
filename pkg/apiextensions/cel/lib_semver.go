package cel

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// semverType is the CEL type of a semantic version, named as
// upstream.
var semverType = cel.ObjectType("kubernetes.Semver")

// semverValue is a semantic version (semver.org 2.0.0) as a CEL value.
type semverValue struct {
	major, minor, patch uint64
	pre                 []string // dot-separated pre-release identifiers
	build               []string // build metadata, ignored by comparisons
}

// parseSemver parses a strict semantic version: MAJOR.MINOR.PATCH,
// numbers without leading zeros, then an optional -pre-release and
// +build, with the errors of the semver library upstream uses.
func parseSemver(s string) (semverValue, error) {
	var v semverValue
	if s == "" {
		return v, errors.New("Version string empty")
	}
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return v, errors.New("No Major.Minor.Patch elements found")
	}
	rest := parts[2]
	patch := rest
	if i := strings.IndexAny(rest, "-+"); i >= 0 {
		patch, rest = rest[:i], rest[i:]
	} else {
		rest = ""
	}
	var err error
	for _, n := range []struct {
		name string
		s    string
		out  *uint64
	}{{"major", parts[0], &v.major}, {"minor", parts[1], &v.minor}, {"patch", patch, &v.patch}} {
		if !allDigits(n.s) {
			return v, fmt.Errorf("Invalid character(s) found in %s number %q", n.name, n.s)
		}
		if len(n.s) > 1 && n.s[0] == '0' {
			return v, fmt.Errorf("%s number must not contain leading zeroes %q", strings.ToUpper(n.name[:1])+n.name[1:], n.s)
		}
		if *n.out, err = strconv.ParseUint(n.s, 10, 64); err != nil {
			return v, fmt.Errorf("parsing %s number %q: %w", n.name, n.s, err)
		}
	}
	if b, ok := strings.CutPrefix(rest, "-"); ok {
		pre, build, hasBuild := strings.Cut(b, "+")
		rest = ""
		if hasBuild {
			rest = "+" + build
		}
		for _, p := range strings.Split(pre, ".") {
			switch {
			case p == "":
				return v, errors.New("Prerelease is empty")
			case allDigits(p) && len(p) > 1 && p[0] == '0':
				return v, fmt.Errorf("Numeric PreRelease version must not contain leading zeroes %q", p)
			case !alnumHyphen(p):
				return v, fmt.Errorf("Invalid character(s) found in prerelease %q", p)
			}
			if allDigits(p) {
				if _, err := strconv.ParseUint(p, 10, 64); err != nil {
					return v, fmt.Errorf("parsing prerelease %q: %w", p, err)
				}
			}
			v.pre = append(v.pre, p)
		}
	}
	if b, ok := strings.CutPrefix(rest, "+"); ok {
		for _, p := range strings.Split(b, ".") {
			switch {
			case p == "":
				return v, errors.New("Build meta data is empty")
			case !alnumHyphen(p):
				return v, fmt.Errorf("Invalid character(s) found in build meta %q", p)
			}
			v.build = append(v.build, p)
		}
	}
	return v, nil
}

// normalizeSemver parses s after dropping a leading "v", leading
// zeros of the numbers, and completing MAJOR or MAJOR.MINOR with zeros,
// as upstream's semver(s, true).
func normalizeSemver(s string) (semverValue, error) {
	s = strings.TrimPrefix(s, "v")
	parts := strings.SplitN(s, ".", 3)
	for i, p := range parts {
		if len(p) > 1 {
			p = strings.TrimLeft(p, "0")
			if p == "" || p[0] < '0' || p[0] > '9' {
				p = "0" + p
			}
			parts[i] = p
		}
	}
	if len(parts) < 3 {
		if strings.ContainsAny(parts[len(parts)-1], "+-") {
			return semverValue{}, errors.New("short version cannot contain PreRelease/Build meta data")
		}
		for len(parts) < 3 {
			parts = append(parts, "0")
		}
	}
	return parseSemver(strings.Join(parts, "."))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func alnumHyphen(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

// compare orders versions by precedence (semver.org §11): numbers, then
// a version without pre-release above one with, then the identifiers:
// numeric below alphanumeric, numeric ones by value, others in ASCII
// order, a shorter prefix first.
func (v semverValue) compare(o semverValue) int {
	for _, c := range [][2]uint64{{v.major, o.major}, {v.minor, o.minor}, {v.patch, o.patch}} {
		if c[0] != c[1] {
			if c[0] < c[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(v.pre) == 0 && len(o.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1
	case len(o.pre) == 0:
		return -1
	}
	for i := 0; i < len(v.pre) && i < len(o.pre); i++ {
		if c := comparePrerelease(v.pre[i], o.pre[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(v.pre) < len(o.pre):
		return -1
	case len(v.pre) > len(o.pre):
		return 1
	}
	return 0
}

func comparePrerelease(a, b string) int {
	an, bn := allDigits(a), allDigits(b)
	switch {
	case an && bn:
		x, _ := strconv.ParseUint(a, 10, 64)
		y, _ := strconv.ParseUint(b, 10, 64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

// String is the version as semver.org writes it.
func (v semverValue) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch)
	if len(v.pre) > 0 {
		s += "-" + strings.Join(v.pre, ".")
	}
	if len(v.build) > 0 {
		s += "+" + strings.Join(v.build, ".")
	}
	return s
}

// ConvertToNative implements ref.Val.
func (v semverValue) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf("").AssignableTo(t) {
		return v.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'Semver' to '%v'", t)
}

// ConvertToType implements ref.Val.
func (v semverValue) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case semverType:
		return v
	case types.TypeType:
		return semverType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", semverType, t)
}

// Equal implements ref.Val: equal precedence (build metadata ignored).
func (v semverValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(semverValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.compare(o) == 0)
}

// Type implements ref.Val.
func (semverValue) Type() ref.Type { return semverType }

// Value implements ref.Val.
func (v semverValue) Value() any { return v }

// semverLibrary is upstream's semver library at version 1: semver(s)
// and isSemver(s), with an optional normalize flag; major, minor, patch,
// isLessThan, isGreaterThan and compareTo.
func semverLibrary() cel.EnvOption {
	return cel.Lib(semverLib{})
}

type semverLib struct{}

func (semverLib) LibraryName() string { return "kubernetes.Semver" }

func (semverLib) ProgramOptions() []cel.ProgramOption { return nil }

func (semverLib) CompileOptions() []cel.EnvOption {
	sv, str, b, i := semverType, cel.StringType, cel.BoolType, cel.IntType
	part := func(name string, f func(semverValue) uint64) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("semver_"+name, []*cel.Type{sv}, i, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(semverValue)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.Int(int64(f(s)))
		})))
	}
	cmp := func(f func(int) ref.Val) func(a, b ref.Val) ref.Val {
		return func(a, b ref.Val) ref.Val {
			x, ok := a.(semverValue)
			if !ok {
				return types.MaybeNoSuchOverloadErr(a)
			}
			y, ok := b.(semverValue)
			if !ok {
				return types.MaybeNoSuchOverloadErr(b)
			}
			return f(x.compare(y))
		}
	}
	return []cel.EnvOption{
		cel.Function("semver",
			cel.Overload("string_to_semver", []*cel.Type{str}, sv, cel.UnaryBinding(func(s ref.Val) ref.Val { return stringToSemver(s, types.False) })),
			cel.Overload("string_bool_to_semver", []*cel.Type{str, b}, sv, cel.BinaryBinding(stringToSemver))),
		cel.Function("isSemver",
			cel.Overload("is_semver_string", []*cel.Type{str}, b, cel.UnaryBinding(func(s ref.Val) ref.Val { return isSemver(s, types.False) })),
			cel.Overload("is_semver_string_bool", []*cel.Type{str, b}, b, cel.BinaryBinding(isSemver))),
		part("major", func(s semverValue) uint64 { return s.major }),
		part("minor", func(s semverValue) uint64 { return s.minor }),
		part("patch", func(s semverValue) uint64 { return s.patch }),
		cel.Function("isGreaterThan", cel.MemberOverload("semver_is_greater_than", []*cel.Type{sv, sv}, b, cel.BinaryBinding(cmp(func(c int) ref.Val { return types.Bool(c == 1) })))),
		cel.Function("isLessThan", cel.MemberOverload("semver_is_less_than", []*cel.Type{sv, sv}, b, cel.BinaryBinding(cmp(func(c int) ref.Val { return types.Bool(c == -1) })))),
		cel.Function("compareTo", cel.MemberOverload("semver_compare_to", []*cel.Type{sv, sv}, i, cel.BinaryBinding(cmp(func(c int) ref.Val { return types.Int(c) })))),
	}
}

// parseSemverArgs parses s, normalized if asked; bad is set when an
// argument has the wrong type.
func parseSemverArgs(s, normalize ref.Val) (v semverValue, bad ref.Val, err error) {
	str, ok := s.(types.String)
	if !ok {
		return semverValue{}, types.MaybeNoSuchOverloadErr(s), nil
	}
	n, ok := normalize.(types.Bool)
	if !ok {
		return semverValue{}, types.MaybeNoSuchOverloadErr(normalize), nil
	}
	if n {
		v, err = normalizeSemver(string(str))
		return v, nil, err
	}
	v, err = parseSemver(string(str))
	return v, nil, err
}

func stringToSemver(s, normalize ref.Val) ref.Val {
	v, bad, err := parseSemverArgs(s, normalize)
	switch {
	case bad != nil:
		return bad
	case err != nil:
		return types.WrapErr(err)
	}
	return v
}

func isSemver(s, normalize ref.Val) ref.Val {
	_, bad, err := parseSemverArgs(s, normalize)
	if bad != nil {
		return bad
	}
	return types.Bool(err == nil)
}
