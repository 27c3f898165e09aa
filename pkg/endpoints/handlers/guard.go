package handlers

import (
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// guard runs fn, a step that works on the request's own input (decoding
// it, converting it, merging it into the stored object, validating it),
// and turns a panic in it into a 400 BadRequest: such a panic is the
// input's doing (a library meeting a value it cannot handle), and the
// client must get an answer, not a reset connection. The panic and its
// stack are logged at error level, as they also point at a check kapi is
// missing. http.ErrAbortHandler is passed on.
func guard(logger *slog.Logger, what string, fn func() error) (err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler {
			panic(p)
		}
		if logger == nil {
			logger = slog.Default()
		}
		logger.Error("panic on request input", "step", what, "panic", p, "stack", string(debug.Stack()))
		err = apierrors.NewBadRequest(fmt.Sprintf("%s: the request's content could not be processed: %v", what, p))
	}()
	return fn()
}

var intOrStringType = reflect.TypeFor[intstr.IntOrString]()

// holdsIntOrString caches, per type, whether a value of it may contain an
// IntOrString.
var holdsIntOrString sync.Map // reflect.Type -> bool

// mayHoldIntOrString reports whether values of t may contain an
// IntOrString (through fields, pointers, slices, arrays and map values).
func mayHoldIntOrString(t reflect.Type) bool {
	if v, ok := holdsIntOrString.Load(t); ok {
		return v.(bool)
	}
	holds := computeHoldsIntOrString(t, map[reflect.Type]bool{})
	// Only the answer for t itself is stored: answers for the types met
	// on the way may be partial while a recursive type is on the stack.
	holdsIntOrString.Store(t, holds)
	return holds
}

func computeHoldsIntOrString(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if v, ok := holdsIntOrString.Load(t); ok {
		return v.(bool)
	}
	if visiting[t] {
		return false // a cycle leads nowhere new
	}
	visiting[t] = true
	switch t.Kind() {
	case reflect.Struct:
		if t == intOrStringType {
			return true
		}
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && computeHoldsIntOrString(f.Type, visiting) {
				return true
			}
		}
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return computeHoldsIntOrString(t.Elem(), visiting)
	}
	return false
}

// checkIntOrStrings finds IntOrString values whose type is neither Int nor
// String. Only protobuf can produce them (its IntOrString carries the type
// as a number); every later step assumes a valid type: encoding fails and
// structured-merge-diff panics ("impossible IntOrString.Type").
func checkIntOrStrings(obj any) field.ErrorList {
	v := reflect.ValueOf(obj)
	if !v.IsValid() || !mayHoldIntOrString(v.Type()) {
		return nil
	}
	var errs field.ErrorList
	walkIntOrStrings(v, nil, &errs)
	return errs
}

func walkIntOrStrings(v reflect.Value, path *field.Path, errs *field.ErrorList) {
	if !mayHoldIntOrString(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkIntOrStrings(v.Elem(), path, errs)
		}
	case reflect.Struct:
		if v.Type() == intOrStringType {
			if t := v.Interface().(intstr.IntOrString).Type; t != intstr.Int && t != intstr.String {
				*errs = append(*errs, field.Invalid(path, int64(t), "an int-or-string must have type 0 (int) or 1 (string)"))
			}
			return
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			child := path
			if name := jsonName(f); name != "" {
				child = path.Child(name)
			}
			walkIntOrStrings(v.Field(i), child, errs)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkIntOrStrings(v.Index(i), path.Index(i), errs)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			walkIntOrStrings(iter.Value(), path.Key(fmt.Sprint(iter.Key().Interface())), errs)
		}
	}
}

// jsonName is a field's name in the JSON form, for error paths; "" for
// an inlined (embedded) struct.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch {
	case name != "" && name != "-":
		return name
	case f.Anonymous:
		return ""
	}
	return f.Name
}

// maxNestingDepth is the deepest nesting a decoded object may have,
// counted as in its JSON form (each object and array is a level): the
// JSON and YAML decoders refuse deeper documents (10000 in Go's
// encoding/json scanner, which sigs.k8s.io/json shares, and in go-yaml).
// Protobuf has no such limit, and a recursive type (CustomResourceDefinition's
// JSONSchemaProps) nests as deep as a 3 MiB body allows, hundreds of
// thousands of levels, which later steps walk recursively for minutes.
const maxNestingDepth = 10000

var recursiveTypes sync.Map // reflect.Type -> bool

// mayNestWithoutBound reports whether t can reach itself (through fields,
// pointers, slices, arrays and map values), so values of it may be
// arbitrarily deep.
func mayNestWithoutBound(t reflect.Type) bool {
	if v, ok := recursiveTypes.Load(t); ok {
		return v.(bool)
	}
	onStack := map[reflect.Type]bool{}
	done := map[reflect.Type]bool{}
	var cyclic func(reflect.Type) bool
	cyclic = func(t reflect.Type) bool {
		if onStack[t] {
			return true
		}
		if done[t] {
			return false
		}
		onStack[t] = true
		defer func() { onStack[t] = false; done[t] = true }()
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				if f := t.Field(i); f.IsExported() && cyclic(f.Type) {
					return true
				}
			}
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			return cyclic(t.Elem())
		}
		return false
	}
	r := cyclic(t)
	recursiveTypes.Store(t, r)
	return r
}

// checkNestingDepth refuses an object of a recursive type nested deeper
// than maxNestingDepth, walking it without recursion (and stopping at the
// limit). Levels are counted as in the JSON form, closely enough: every
// struct, non-empty map and non-empty list (but []byte) is one.
func checkNestingDepth(obj any) error {
	v := reflect.ValueOf(obj)
	if !v.IsValid() || !mayNestWithoutBound(v.Type()) {
		return nil
	}
	type item struct {
		v     reflect.Value
		depth int
	}
	stack := []item{{v, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		v, depth := it.v, it.depth
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				stack = append(stack, item{v.Elem(), depth})
			}
			continue
		case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
			if v.Kind() != reflect.Struct && (v.Len() == 0 || v.Type().Elem().Kind() == reflect.Uint8) {
				continue // nothing nested, or []byte (a string in JSON)
			}
			depth++
			if depth > maxNestingDepth {
				return fmt.Errorf("exceeded max depth of %d", maxNestingDepth)
			}
		default:
			continue
		}
		switch v.Kind() {
		case reflect.Struct:
			t := v.Type()
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				d := depth
				if f.Anonymous {
					d-- // inlined: the same JSON object
				}
				stack = append(stack, item{v.Field(i), d})
			}
		case reflect.Map:
			iter := v.MapRange()
			for iter.Next() {
				stack = append(stack, item{iter.Value(), depth})
			}
		default:
			for i := range v.Len() {
				stack = append(stack, item{v.Index(i), depth})
			}
		}
	}
	return nil
}
