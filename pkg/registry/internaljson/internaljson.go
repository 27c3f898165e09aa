// Package internaljson renders values of k8s.io/api types as encoding/json
// renders upstream's internal types of them.
//
// kube-apiserver's handwritten validation runs on its internal API types
// (k8s.io/kubernetes/pkg/apis/<group>), and field.Error.ErrorBody renders a
// non-scalar bad value with json.Marshal. Internal types have no JSON tags:
// every field is named by its Go name, none is omitted (nil is null), and
// embedded structs are flattened. Values of apimachinery's own types
// (ObjectMeta, Time, Quantity, IntOrString, RawExtension...), which the
// internal types share, keep their JSON form. kapi validates the k8s.io/api
// types themselves, so an error whose value is a struct would print that
// type's JSON; Value wraps such a value so that it prints as upstream's.
//
// The internal layout comes from types_generated.go, written by
// hack/internaltypes from upstream's source (go:generate below). A v1 value
// is walked along the internal type: each internal field takes the v1 field
// of the same Go name (promoted fields included), a field the v1 type lacks
// prints the internal zero value, a v1 field the internal type lacks is not
// printed.
package internaljson

//go:generate sh -c "go run ../../../hack/internaltypes -src $(go env GOMODCACHE)/k8s.io/kubernetes@v1.37.2/pkg/apis -version v1.37.2 -o types_generated.go"

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// internalType is one internal type: a struct's exported fields in
// declaration order, or, for a named non-struct type, its underlying type.
type internalType struct {
	underlying string
	fields     []internalField
}

// internalField is one field of an internal struct; typ is in the table's
// notation (see hack/internaltypes): a basic type's name, "group.Name",
// "@importpath.Name" for a type of another package, "*T", "[]T",
// "map[K]V", "any".
type internalField struct {
	name     string
	typ      string
	embedded bool
}

const apiPrefix = "k8s.io/api/"

// Value returns v ready to be a field.Error's BadValue as upstream's
// handwritten validation would hold it: when v is, or holds (pointers,
// slices, maps), a struct of a k8s.io/api type that upstream has an
// internal type of, a value that marshals as that internal type; else v.
func Value(v any) any {
	if v == nil {
		return v
	}
	if _, ok := v.(internalValue); ok {
		return v
	}
	expr, ok := exprOf(reflect.TypeOf(v))
	if !ok {
		return v
	}
	return internalValue{v: v, expr: expr}
}

// exprOf is the internal type expression of t, a k8s.io/api type, and
// whether it reaches an internal struct (otherwise the JSON forms agree).
func exprOf(t reflect.Type) (string, bool) {
	switch t.Kind() {
	case reflect.Pointer:
		e, ok := exprOf(t.Elem())
		return "*" + e, ok
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "", false
		}
		e, ok := exprOf(t.Elem())
		return "[]" + e, ok
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return "", false
		}
		e, ok := exprOf(t.Elem())
		return "map[string]" + e, ok
	case reflect.Struct:
		g, ok := groupOf(t)
		if !ok {
			return "", false
		}
		name := g + "." + t.Name()
		it, ok := internalTypes()[name]
		if !ok || it.underlying != "" {
			return "", false
		}
		return name, true
	}
	return "", false
}

// groupOf is the internal group of a k8s.io/api type: k8s.io/api/<group>/<version>.
func groupOf(t reflect.Type) (string, bool) {
	rest, ok := strings.CutPrefix(t.PkgPath(), apiPrefix)
	if !ok || t.Name() == "" {
		return "", false
	}
	g, _, ok := strings.Cut(rest, "/")
	return g, ok
}

type internalValue struct {
	v    any
	expr string
}

func (iv internalValue) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := write(&b, reflect.ValueOf(iv.v), iv.expr); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// String is used by field.Error when marshalling fails.
func (iv internalValue) String() string { return fmt.Sprintf("%#v", iv.v) }

// internalTypes is the table of types_generated.go, built on first use: only
// a validation error with a struct value (or a diff in one) needs it, and
// building it at package initialisation ran ~190 KB of code and 680
// allocations in every process, at every start.
var internalTypes = sync.OnceValue(internalTypesTable)

// externalTypes are the types of other packages (apimachinery's, a few
// versioned ones) the internal types use, by their table name, for the zero
// value of a field the v1 type lacks. TestTableParses checks that it has
// every one the table names. Built on first use, as internalTypes.
var externalTypes = sync.OnceValue(func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, v := range []any{
		metav1.TypeMeta{}, metav1.ObjectMeta{}, metav1.ListMeta{}, metav1.Time{}, metav1.MicroTime{},
		metav1.LabelSelector{}, metav1.LabelSelectorRequirement{}, metav1.Condition{}, metav1.OwnerReference{},
		metav1.GroupVersionKind{}, metav1.GroupVersionResource{}, metav1.GroupResource{},
		metav1.Status{}, metav1.StatusReason(""), metav1.DeleteOptions{}, metav1.FieldSelectorRequirement{},
		metainternalversion.List{},
		resource.Quantity{}, intstr.IntOrString{}, types.UID(""), types.NodeName(""),
		runtime.RawExtension{},
		corev1.Protocol(""), corev1.ResourceName(""),
		schedulingv1alpha3.WorkloadPodGroupDisruptionMode{}, schedulingv1alpha3.WorkloadPodGroupResourceClaim{},
		schedulingv1alpha3.WorkloadPodGroupSchedulingConstraints{}, schedulingv1alpha3.WorkloadPodGroupSchedulingPolicy{},
	} {
		t := reflect.TypeOf(v)
		m["@"+t.PkgPath()+"."+t.Name()] = t
	}
	m["@k8s.io/apimachinery/pkg/runtime.Object"] = reflect.TypeFor[runtime.Object]()
	return m
})

var (
	exprCache sync.Map // string -> *texpr
)

// texpr is a parsed type expression.
type texpr struct {
	kind     byte // '*', '[', 'm', 'b' basic, 'i' internal named, 'e' external
	elem     *texpr
	name     string
	internal *internalType
}

func parse(s string) (*texpr, error) {
	if e, ok := exprCache.Load(s); ok {
		return e.(*texpr), nil
	}
	e, err := parseExpr(s)
	if err != nil {
		return nil, err
	}
	exprCache.Store(s, e)
	return e, nil
}

func parseExpr(s string) (*texpr, error) {
	switch {
	case strings.HasPrefix(s, "*"):
		el, err := parse(s[1:])
		return &texpr{kind: '*', elem: el}, err
	case strings.HasPrefix(s, "[]"):
		el, err := parse(s[2:])
		return &texpr{kind: '[', elem: el, name: s[2:]}, err
	case strings.HasPrefix(s, "map["):
		// Keys are names, never composite.
		k, v, ok := strings.Cut(s[len("map["):], "]")
		if !ok {
			return nil, fmt.Errorf("internaljson: bad type %q", s)
		}
		el, err := parse(v)
		return &texpr{kind: 'm', elem: el, name: k}, err
	case strings.HasPrefix(s, "@"):
		if _, ok := externalTypes()[s]; !ok {
			return nil, fmt.Errorf("internaljson: unknown external type %q", s)
		}
		return &texpr{kind: 'e', name: s}, nil
	case strings.Contains(s, "."):
		it, ok := internalTypes()[s]
		if !ok {
			return nil, fmt.Errorf("internaljson: unknown internal type %q", s)
		}
		return &texpr{kind: 'i', name: s, internal: &it}, nil
	}
	return &texpr{kind: 'b', name: s}, nil
}

// write writes v, a value of a k8s.io/api type or invalid when the v1 type
// has no such field, as json.Marshal writes a value of internal type expr.
func write(b *bytes.Buffer, v reflect.Value, expr string) error {
	e, err := parse(expr)
	if err != nil {
		return err
	}
	return writeExpr(b, v, e)
}

// deref follows v's pointers and interfaces; invalid when one is nil.
func deref(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

func writeExpr(b *bytes.Buffer, v reflect.Value, e *texpr) error {
	switch e.kind {
	case '*':
		v = deref(v)
		if !v.IsValid() {
			b.WriteString("null")
			return nil
		}
		return writeExpr(b, v, e.elem)
	case '[':
		v = deref(v)
		if !v.IsValid() || ((v.Kind() == reflect.Slice) && v.IsNil()) {
			b.WriteString("null")
			return nil
		}
		if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
			return marshal(b, v.Interface())
		}
		if e.name == "byte" || e.name == "uint8" {
			return marshal(b, v.Interface())
		}
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeExpr(b, v.Index(i), e.elem); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case 'm':
		v = deref(v)
		if !v.IsValid() || v.IsNil() {
			b.WriteString("null")
			return nil
		}
		if v.Kind() != reflect.Map || v.Type().Key().Kind() != reflect.String {
			return marshal(b, v.Interface())
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := marshal(b, k.String()); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := writeExpr(b, v.MapIndex(k), e.elem); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case 'e':
		v = deref(v)
		if !v.IsValid() {
			return marshal(b, reflect.Zero(externalTypes()[e.name]).Interface())
		}
		return marshal(b, v.Interface())
	case 'b':
		v = deref(v)
		if !v.IsValid() {
			return writeZeroBasic(b, e.name)
		}
		return marshal(b, v.Interface())
	case 'i':
		it := e.internal
		if it.underlying != "" {
			return write(b, v, it.underlying)
		}
		v = deref(v)
		if v.IsValid() && v.Kind() != reflect.Struct {
			// Another shape in v1: its own form is the best kapi knows.
			return marshal(b, v.Interface())
		}
		b.WriteByte('{')
		first := true
		if err := writeFields(b, v, it, &first); err != nil {
			return err
		}
		b.WriteByte('}')
		return nil
	}
	return fmt.Errorf("internaljson: bad type kind %q", e.kind)
}

// writeFields writes the members of internal struct it taking values from
// v (a v1 struct, or invalid for the zero value), embedded structs' members
// in place.
func writeFields(b *bytes.Buffer, v reflect.Value, it *internalType, first *bool) error {
	for _, f := range it.fields {
		sub := fieldOf(v, f.name)
		if f.embedded {
			if err := writeEmbedded(b, v, sub, f, first); err != nil {
				return err
			}
			continue
		}
		if !*first {
			b.WriteByte(',')
		}
		*first = false
		if err := marshal(b, f.name); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := write(b, sub, f.typ); err != nil {
			return err
		}
	}
	return nil
}

func writeEmbedded(b *bytes.Buffer, v, sub reflect.Value, f internalField, first *bool) error {
	e, err := parse(strings.TrimPrefix(f.typ, "*"))
	if err != nil {
		return err
	}
	switch e.kind {
	case 'i':
		if e.internal.underlying != "" {
			return fmt.Errorf("internaljson: embedded non-struct %s", f.typ)
		}
		if !sub.IsValid() {
			// v1 has the fields in place.
			sub = v
		}
		return writeFields(b, deref(sub), e.internal, first)
	case 'e':
		sub = deref(sub)
		if !sub.IsValid() {
			return nil
		}
		var inner bytes.Buffer
		if err := marshal(&inner, sub.Interface()); err != nil {
			return err
		}
		m := bytes.TrimSpace(inner.Bytes())
		if len(m) > 2 && m[0] == '{' {
			if !*first {
				b.WriteByte(',')
			}
			b.Write(m[1 : len(m)-1])
			*first = false
		}
		return nil
	}
	return fmt.Errorf("internaljson: embedded %s is not a struct", f.typ)
}

// fieldOf is v's field (promoted ones included) named name; invalid when v
// is invalid, has no such field or reaches it through a nil pointer.
func fieldOf(v reflect.Value, name string) reflect.Value {
	v = deref(v)
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	sf, ok := v.Type().FieldByName(name)
	if !ok || !sf.IsExported() {
		return reflect.Value{}
	}
	f, err := v.FieldByIndexErr(sf.Index)
	if err != nil {
		return reflect.Value{}
	}
	return f
}

func writeZeroBasic(b *bytes.Buffer, name string) error {
	switch name {
	case "string":
		b.WriteString(`""`)
	case "bool":
		b.WriteString("false")
	case "any":
		b.WriteString("null")
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
		"float32", "float64", "byte", "rune":
		b.WriteString("0")
	default:
		return fmt.Errorf("internaljson: unknown basic type %q", name)
	}
	return nil
}

func marshal(b *bytes.Buffer, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("internaljson: %w", err)
	}
	b.Write(j)
	return nil
}

// Diff is upstream's diff.Diff(a, b) of the internal forms of a and b, as
// its handwritten validation appends to some errors (a pod's or a claim's
// forbidden spec change): a unified diff of their indented JSON.
func Diff(a, b any) string {
	return diff.Diff(Value(a), Value(b))
}
