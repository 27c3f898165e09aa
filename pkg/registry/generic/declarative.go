package generic

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// In kube-apiserver v1.37 declarative validation is on (DeclarativeValidation
// GA, DeclarativeValidationBeta on by default). rest.ValidateCreate and
// ValidateUpdate hand the handwritten errors to
// rest.ValidateDeclarativelyWithMigrationChecks, which drops each handwritten
// error that an enforced (standard or beta) declarative error covers and
// appends the declarative errors at the end, in the order the generated
// validators (zz_generated.validations.go) walk the object: a type's fields
// in declaration order, a field's own checks before its members', list items
// by index.
//
// kapi has no declarative validators. Its handwritten validation instead
// marks, with field.Error.MarkCoveredByDeclarative and MarkBeta, each error
// upstream answers from a beta declarative rule (the ones
// validate.FilterCoveredHandwrittenErrors lets replace a handwritten error),
// worded as the declarative validator words it (see
// pkg/controlplane/validation/declarative). An error marked covered without
// the beta level stays where the handwritten validation put it: upstream's
// own metadata validation (apimachinery) marks errors covered whose
// declarative rules are alpha, which upstream does not enforce.
// orderDeclarative moves the marked errors to the end in the generated
// validators' order, so the list is upstream's.

// orderDeclarative returns errs with the errors covered by enforced
// declarative validation moved to the end, in the order upstream's generated
// validators for obj's type reach their fields. The other errors keep their
// order; for a built-in type, each of them is reported once (see
// builtInType). errs is returned unchanged when nothing is marked and
// nothing repeats.
func orderDeclarative(obj runtime.Object, errs field.ErrorList) field.ErrorList {
	t := reflect.TypeOf(obj)
	dedupe := builtInType(t)
	first := slices.IndexFunc(errs, declarativeEnforced)
	if first < 0 && !(dedupe && repeats(errs)) {
		return errs
	}
	out := make(field.ErrorList, 0, len(errs))
	var moved []*field.Error
	seen := map[string]bool{}
	for _, e := range errs {
		switch {
		case declarativeEnforced(e):
			moved = append(moved, e)
		case dedupe && seen[e.Error()]:
		default:
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	keys := make(map[*field.Error][]int, len(moved))
	for _, e := range moved {
		keys[e] = errorOrder(t, e)
	}
	slices.SortStableFunc(moved, func(a, b *field.Error) int {
		return slices.Compare(keys[a], keys[b])
	})
	return append(out, moved...)
}

// builtInType reports whether t is a type of k8s.io/api, whose upstream
// strategies all take part in declarative validation in v1.37
// (rest.DeclarativeValidation): its handwritten errors then pass through
// field.ErrorList.Filter, which goes through ToAggregate and so keeps one
// of each message (kube-apiserver v1.37.2 reports a pod update's empty
// image, checked twice, once). Custom resources, CRDs and APIServices do
// not.
func builtInType(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t != nil && strings.HasPrefix(t.PkgPath(), "k8s.io/api/")
}

// repeats reports whether two errors of errs say the same.
func repeats(errs field.ErrorList) bool {
	if len(errs) < 2 {
		return false
	}
	seen := make(map[string]bool, len(errs))
	for _, e := range errs {
		if seen[e.Error()] {
			return true
		}
		seen[e.Error()] = true
	}
	return false
}

// distinctErrors returns the errors of errs whose text no earlier error
// has (fmt's %v of a field.Error is its Error()).
func distinctErrors(errs field.ErrorList) field.ErrorList {
	seen := make(map[string]bool, len(errs))
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return out
}

// nameDeclarative turns the metadata errors in errs into those of
// upstream's ValidateObjectMetaWithOpts with a declarative name rule: the
// format errors on metadata.name are the rule's (validate returns them),
// and generateName is not checked (the generated name is). An empty name
// keeps the handwritten "Required value": the declarative rule is
// optional.
func nameDeclarative(errs field.ErrorList, validate func(*field.Path, string) field.ErrorList, name string) field.ErrorList {
	out := errs[:0:0]
	for _, e := range errs {
		if e.Type == field.ErrorTypeInvalid && (e.Field == "metadata.name" || e.Field == "metadata.generateName") {
			continue
		}
		out = append(out, e)
	}
	if name == "" {
		return out
	}
	return append(out, validate(field.NewPath("metadata", "name"), name)...)
}

// declarativeEnforced reports whether upstream answers e from an enforced
// declarative rule: marked covered, at the beta level.
func declarativeEnforced(e *field.Error) bool {
	return e != nil && e.CoveredByDeclarative && e.IsBeta()
}

// typeRules holds, for a struct type, the members whose declarative rules
// upstream's generated validator for the type checks at the type level
// (unions, discriminated members: validate.Discriminated,
// DiscriminatedUnion), before it walks the type's fields, in the order it
// checks them. Written only by RegisterDeclarativeTypeRules at init.
var typeRules = map[reflect.Type][]string{}

// RegisterDeclarativeTypeRules records that upstream's generated validator
// for struct type t (of a stored object) checks members, JSON field names,
// at the type level before t's fields, in this order: an error whose path
// ends at one of them sorts before the errors of t's fields; errors below
// the member keep its field position. Call it from an init function.
func RegisterDeclarativeTypeRules(t reflect.Type, members ...string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	typeRules[t] = members
}

// errorOrder is e's position in the generated validators' walk of t:
// walkOrder of its path, except that a "Duplicate value" on a list item
// comes from the list's own uniqueness check (validate.ValSliceUnique),
// which runs before the items are walked: it sorts after the list's
// other checks and before every item's errors, duplicates by index.
func errorOrder(t reflect.Type, e *field.Error) []int {
	key := walkOrder(t, e.Field)
	if e.Type == field.ErrorTypeDuplicate && strings.HasSuffix(e.Field, "]") && len(key) > 0 {
		last := key[len(key)-1]
		key = append(key[:len(key)-1], -1, last)
	}
	return key
}

// unknownStep sorts a path step kapi cannot place after every known one.
const unknownStep = 1 << 30

// walkOrder is the position of path among the fields of t as the generated
// validators visit them: for each step, the field's index in its struct's
// declaration order (inlined structs flattened in place) or the list index.
// A path is a prefix of, and so sorts before, its members' paths, as a
// field's own checks run before its type's. Map keys sort equal (stable).
// A path ending at a member of its struct's type-level rules
// (RegisterDeclarativeTypeRules) takes a negative position, before the
// struct's fields.
func walkOrder(t reflect.Type, path string) []int {
	var key []int
	steps := splitFieldPath(path)
	for n, step := range steps {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil {
			key = append(key, unknownStep)
			continue
		}
		if step.index {
			switch t.Kind() {
			case reflect.Slice, reflect.Array:
				i, err := strconv.Atoi(step.name)
				if err != nil {
					i = unknownStep
				}
				key = append(key, i)
				t = t.Elem()
			case reflect.Map:
				key = append(key, 0)
				t = t.Elem()
			default:
				key = append(key, unknownStep)
				t = nil
			}
			continue
		}
		if t.Kind() != reflect.Struct {
			key = append(key, unknownStep)
			t = nil
			continue
		}
		if members := typeRules[t]; n == len(steps)-1 && len(members) > 0 {
			if i := slices.Index(members, step.name); i >= 0 {
				key = append(key, i-len(members))
				continue
			}
		}
		pos, ft, ok := jsonField(t, step.name, 0)
		if !ok {
			key = append(key, unknownStep)
			t = nil
			continue
		}
		key = append(key, pos)
		t = ft
	}
	return key
}

// jsonField finds the field of struct t whose JSON name is name, looking
// through inlined (embedded or `json:",inline"`) structs. pos counts fields
// in declaration order with inlined ones flattened; base is the count before
// t.
func jsonField(t reflect.Type, name string, base int) (int, reflect.Type, bool) {
	pos := base
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		jsonName, opts, _ := strings.Cut(tag, ",")
		inline := strings.Contains(","+opts+",", ",inline,") || (f.Anonymous && jsonName == "")
		if inline {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if p, typ, ok := jsonField(ft, name, pos); ok {
					return p, typ, true
				}
				pos += countFields(ft)
				continue
			}
		}
		if jsonName == "-" || !f.IsExported() {
			pos++
			continue
		}
		if jsonName == "" {
			jsonName = f.Name
		}
		if jsonName == name {
			return pos, f.Type, true
		}
		pos++
	}
	return 0, nil, false
}

// countFields is how many positions jsonField gives struct t's fields.
func countFields(t reflect.Type) int {
	n := 0
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		jsonName, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if strings.Contains(","+opts+",", ",inline,") || (f.Anonymous && jsonName == "") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				n += countFields(ft)
				continue
			}
		}
		n++
	}
	return n
}

type pathStep struct {
	name  string
	index bool // a list index or map key ("[...]")
}

// splitFieldPath splits a field.Path string ("spec.containers[0].name",
// "metadata.labels[a.b/c]") into its steps.
func splitFieldPath(p string) []pathStep {
	var steps []pathStep
	for len(p) > 0 {
		switch p[0] {
		case '.':
			p = p[1:]
		case '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return append(steps, pathStep{name: p[1:], index: true})
			}
			steps = append(steps, pathStep{name: p[1:end], index: true})
			p = p[end+1:]
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			steps = append(steps, pathStep{name: p[:end]})
			p = p[end:]
		}
	}
	return steps
}
