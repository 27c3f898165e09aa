package openapi

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

var updateSMD = flag.Bool("update-smd", false, "rewrite "+smdFile+" from the generated OpenAPI definitions")

const smdFile = "zz_generated.smd.go"

// computedSMDTypes converts the generated OpenAPI v3 definitions to
// structured-merge-diff types, as the Parser did at every process start
// before zz_generated.smd.go held the result, and returns them with the
// definition names, both sorted by name.
func computedSMDTypes(t *testing.T) ([]smdschema.TypeDef, []string) {
	t.Helper()
	raw := &rawDefinitions{defs: generatedDefinitions(refPrefixV3)}
	s, err := schemaconv.ToSchemaFromOpenAPI(parserModels(raw), false)
	if err != nil {
		t.Fatal(err)
	}
	types := slices.Clone(s.Types)
	slices.SortFunc(types, func(a, b smdschema.TypeDef) int { return strings.Compare(a.Name, b.Name) })
	names := make([]string, 0, len(raw.defs))
	for name := range raw.defs {
		names = append(names, name)
	}
	slices.Sort(names)
	return types, names
}

// computedIndex lists, per definition name, the kinds it is served as:
// every kind of a scheme of all API group-versions kapi knows whose type
// has a generated definition, sorted by group, version, kind. Sorted by
// name.
func computedIndex(t *testing.T, names []string) []definitionGVKs {
	t.Helper()
	s, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]schema.GroupVersionKind{}
	for gvk := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		goName, err := s.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			t.Fatalf("definition name of %v: %v", gvk, err)
		}
		name := DefinitionName(goName)
		if _, ok := slices.BinarySearch(names, name); !ok {
			// Kinds with no generated definition (admission.k8s.io's
			// AdmissionReview, for one) still appear in shared kinds' lists
			// through the meta kinds each group registers.
			continue
		}
		if !slices.Contains(byName[name], gvk) {
			byName[name] = append(byName[name], gvk)
		}
	}
	out := make([]definitionGVKs, 0, len(byName))
	for _, name := range sortedKeys(byName) {
		gvks := byName[name]
		slices.SortFunc(gvks, compareGVK)
		out = append(out, definitionGVKs{name: name, gvks: gvks})
	}
	return out
}

// TestGeneratedIndexEqualComputed: the generated index is the one a
// scheme of every API group-version gives.
func TestGeneratedIndexEqualComputed(t *testing.T) {
	_, names := computedSMDTypes(t)
	want := computedIndex(t, names)
	kinds := 0
	for _, e := range want {
		kinds += len(e.gvks)
	}
	if len(want) < 300 || kinds < 700 {
		t.Fatalf("computed index of %d definitions and %d kinds, want the whole of k8s.io/api (over 300 and 700)", len(want), kinds)
	}
	if diff := cmp.Diff(want, generatedDefinitionGVKs[:], cmp.AllowUnexported(definitionGVKs{})); diff != "" {
		t.Fatalf("generated index differs (-computed +generated):\n%s", diff)
	}
}

// TestGeneratedSMDTypesAreCurrent: zz_generated.smd.go is what this
// generator makes of today's generated OpenAPI definitions (regenerate
// with go generate ./pkg/openapi after hack/update-openapi.sh).
func TestGeneratedSMDTypesAreCurrent(t *testing.T) {
	types, names := computedSMDTypes(t)
	src, err := renderSMDTypes(types, names, computedIndex(t, names))
	if err != nil {
		t.Fatal(err)
	}
	if *updateSMD {
		if err := os.WriteFile(smdFile, src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(smdFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, src) {
		t.Fatalf("%s is out of date: run go generate ./pkg/openapi", smdFile)
	}
}

// TestGeneratedSMDTypesEqualComputed: the compiled literal holds exactly
// the types schemaconv computes, every exported field of every level
// compared (go-cmp; JSON would lose the List's and Map's same-named
// fields, which Atom embeds side by side), with each map's fields in name
// order (schemaconv's own order is a Go map's).
func TestGeneratedSMDTypesEqualComputed(t *testing.T) {
	types, names := computedSMDTypes(t)
	if !slices.Equal(names, generatedDefinitionNames[:]) {
		t.Fatalf("definition names differ: %d computed, %d generated", len(names), len(generatedDefinitionNames))
	}
	if len(types) != len(generatedSMDTypes) || len(types) < 500 {
		t.Fatalf("types: %d computed, %d generated", len(types), len(generatedSMDTypes))
	}
	for _, td := range types {
		sortFields(td.Atom)
	}
	ignoreCaches := cmpopts.IgnoreUnexported(smdschema.Map{})
	for i := range types {
		if diff := cmp.Diff(types[i], generatedSMDTypes[i], ignoreCaches); diff != "" {
			t.Fatalf("type %s differs (-computed +generated):\n%s", types[i].Name, diff)
		}
	}
}

// sortFields sorts the fields of every map in a (the computed types are
// this test's own).
func sortFields(a smdschema.Atom) {
	if a.List != nil {
		sortFields(a.List.ElementType.Inlined)
	}
	if m := a.Map; m != nil {
		slices.SortStableFunc(m.Fields, func(a, b smdschema.StructField) int { return strings.Compare(a.Name, b.Name) })
		for _, f := range m.Fields {
			sortFields(f.Type.Inlined)
		}
		sortFields(m.ElementType.Inlined)
	}
}

// smdPrinter writes structured-merge-diff types as a Go composite
// literal the compiler initialises statically: pointers to strings,
// scalars and element relationships point into package-level arrays.
type smdPrinter struct {
	b             bytes.Buffer
	strs          map[string]int
	scalars       map[smdschema.Scalar]int
	relationships map[smdschema.ElementRelationship]int
	imports       map[string]string // package path: alias, of defaults' types
	err           error
}

func renderSMDTypes(types []smdschema.TypeDef, names []string, index []definitionGVKs) ([]byte, error) {
	p := &smdPrinter{strs: map[string]int{}, scalars: map[smdschema.Scalar]int{}, relationships: map[smdschema.ElementRelationship]int{}, imports: map[string]string{}}
	// The pointed-to values come first in sorted order, so the output does
	// not depend on the order the types are walked in.
	for _, td := range types {
		p.collectAtom(td.Atom)
	}
	strs, scalars, rels := sortedKeys(p.strs), sortedKeys(p.scalars), sortedKeys(p.relationships)
	for i, s := range strs {
		p.strs[s] = i
	}
	for i, s := range scalars {
		p.scalars[s] = i
	}
	for i, r := range rels {
		p.relationships[r] = i
	}

	var body bytes.Buffer
	for _, td := range types {
		p.b.Reset()
		fmt.Fprintf(&p.b, "{Name: %s", strconv.Quote(td.Name))
		if a := p.atom(td.Atom); a != "" {
			fmt.Fprintf(&p.b, ", Atom: %s", a)
		}
		p.b.WriteString("},\n")
		body.Write(p.b.Bytes())
	}

	var out bytes.Buffer
	out.WriteString(`// Code generated by TestGeneratedSMDTypesAreCurrent (go generate ./pkg/openapi); DO NOT EDIT.

// The index of the generated OpenAPI definitions and their
// structured-merge-diff types, computed once here instead of at every start.

package openapi

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
`)
	for _, path := range sortedKeys(p.imports) {
		fmt.Fprintf(&out, "%s %s\n", p.imports[path], strconv.Quote(path))
	}
	out.WriteString(`)

// generatedDefinitionNames are the keys of the generated OpenAPI
// definitions (REST-friendly names), sorted.
var generatedDefinitionNames = [...]string{
`)
	for _, n := range names {
		fmt.Fprintf(&out, "%s,\n", strconv.Quote(n))
	}
	out.WriteString(`}

// generatedDefinitionGVKs are the kinds each definition is served as, the
// x-kubernetes-group-version-kind extension's content (see
// [NewDefinitions]), sorted by definition name.
var generatedDefinitionGVKs = [...]definitionGVKs{
`)
	for _, e := range index {
		gvks := make([]string, len(e.gvks))
		for i, gvk := range e.gvks {
			gvks[i] = fmt.Sprintf("{Group: %s, Version: %s, Kind: %s}", strconv.Quote(gvk.Group), strconv.Quote(gvk.Version), strconv.Quote(gvk.Kind))
		}
		fmt.Fprintf(&out, "{name: %s, gvks: []schema.GroupVersionKind{%s}},\n", strconv.Quote(e.name), strings.Join(gvks, ", "))
	}
	out.WriteString("}\n\n// The values the types' pointers point at.\nvar smdStrings = [...]string{\n")
	for _, s := range strs {
		fmt.Fprintf(&out, "%s,\n", strconv.Quote(s))
	}
	out.WriteString("}\n\nvar smdScalars = [...]smdschema.Scalar{\n")
	for _, s := range scalars {
		fmt.Fprintf(&out, "%s,\n", strconv.Quote(string(s)))
	}
	out.WriteString("}\n\nvar smdRelationships = [...]smdschema.ElementRelationship{\n")
	for _, r := range rels {
		fmt.Fprintf(&out, "%s,\n", strconv.Quote(string(r)))
	}
	out.WriteString(`}

// generatedSMDTypes are the structured-merge-diff types schemaconv makes
// of the generated OpenAPI v3 definitions (the Parser's schema), sorted by
// name, with each map's fields sorted by name (schemaconv's own order is
// a Go map's).
var generatedSMDTypes = []smdschema.TypeDef{
`)
	out.Write(body.Bytes())
	out.WriteString("}\n")
	if p.err != nil {
		return nil, p.err
	}
	return format.Source(out.Bytes())
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (p *smdPrinter) collectAtom(a smdschema.Atom) {
	if a.Scalar != nil {
		p.scalars[*a.Scalar] = 0
	}
	if a.List != nil {
		p.collectRef(a.List.ElementType)
	}
	if a.Map != nil {
		for _, f := range a.Map.Fields {
			p.collectRef(f.Type)
		}
		for _, u := range a.Map.Unions {
			if u.Discriminator != nil {
				p.strs[*u.Discriminator] = 0
			}
		}
		p.collectRef(a.Map.ElementType)
	}
}

func (p *smdPrinter) collectRef(r smdschema.TypeRef) {
	if r.NamedType != nil {
		p.strs[*r.NamedType] = 0
	}
	if r.ElementRelationship != nil {
		p.relationships[*r.ElementRelationship] = 0
	}
	p.collectAtom(r.Inlined)
}

// atom returns a's literal, "" when a is empty.
func (p *smdPrinter) atom(a smdschema.Atom) string {
	var parts []string
	if a.Scalar != nil {
		parts = append(parts, fmt.Sprintf("Scalar: &smdScalars[%d]", p.scalars[*a.Scalar]))
	}
	if l := a.List; l != nil {
		var lp []string
		if r := p.ref(l.ElementType); r != "" {
			lp = append(lp, "ElementType: "+r)
		}
		if l.ElementRelationship != "" {
			lp = append(lp, "ElementRelationship: "+strconv.Quote(string(l.ElementRelationship)))
		}
		if l.Keys != nil {
			keys := make([]string, len(l.Keys))
			for i, k := range l.Keys {
				keys[i] = strconv.Quote(k)
			}
			lp = append(lp, "Keys: []string{"+strings.Join(keys, ", ")+"}")
		}
		parts = append(parts, "List: &smdschema.List{"+strings.Join(lp, ", ")+"}")
	}
	if m := a.Map; m != nil {
		var mp []string
		if m.Fields != nil {
			fields := slices.Clone(m.Fields)
			slices.SortStableFunc(fields, func(a, b smdschema.StructField) int { return strings.Compare(a.Name, b.Name) })
			var fs []string
			for _, f := range fields {
				fp := []string{"Name: " + strconv.Quote(f.Name)}
				if r := p.ref(f.Type); r != "" {
					fp = append(fp, "Type: "+r)
				}
				if f.Default != nil {
					fp = append(fp, "Default: "+p.value(f.Default))
				}
				fs = append(fs, "{"+strings.Join(fp, ", ")+"}")
			}
			mp = append(mp, "Fields: []smdschema.StructField{\n"+strings.Join(fs, ",\n")+",\n}")
		}
		if m.Unions != nil {
			var us []string
			for _, u := range m.Unions {
				var up []string
				if u.Discriminator != nil {
					up = append(up, fmt.Sprintf("Discriminator: &smdStrings[%d]", p.strs[*u.Discriminator]))
				}
				if u.DeduceInvalidDiscriminator {
					up = append(up, "DeduceInvalidDiscriminator: true")
				}
				if u.Fields != nil {
					var ufs []string
					for _, f := range u.Fields {
						ufs = append(ufs, fmt.Sprintf("{FieldName: %s, DiscriminatorValue: %s}", strconv.Quote(f.FieldName), strconv.Quote(f.DiscriminatorValue)))
					}
					up = append(up, "Fields: []smdschema.UnionField{"+strings.Join(ufs, ", ")+"}")
				}
				us = append(us, "{"+strings.Join(up, ", ")+"}")
			}
			mp = append(mp, "Unions: []smdschema.Union{"+strings.Join(us, ", ")+"}")
		}
		if r := p.ref(m.ElementType); r != "" {
			mp = append(mp, "ElementType: "+r)
		}
		if m.ElementRelationship != "" {
			mp = append(mp, "ElementRelationship: "+strconv.Quote(string(m.ElementRelationship)))
		}
		parts = append(parts, "Map: &smdschema.Map{"+strings.Join(mp, ", ")+"}")
	}
	if len(parts) == 0 {
		return ""
	}
	return "smdschema.Atom{" + strings.Join(parts, ", ") + "}"
}

// ref returns r's literal, "" when r is empty.
func (p *smdPrinter) ref(r smdschema.TypeRef) string {
	var parts []string
	if r.NamedType != nil {
		parts = append(parts, fmt.Sprintf("NamedType: &smdStrings[%d]", p.strs[*r.NamedType]))
	}
	if a := p.atom(r.Inlined); a != "" {
		parts = append(parts, "Inlined: "+a)
	}
	if r.ElementRelationship != nil {
		parts = append(parts, fmt.Sprintf("ElementRelationship: &smdRelationships[%d]", p.relationships[*r.ElementRelationship]))
	}
	if r.Nullable {
		parts = append(parts, "Nullable: true")
	}
	if len(parts) == 0 {
		return ""
	}
	return "smdschema.TypeRef{" + strings.Join(parts, ", ") + "}"
}

// value returns a field default's literal: strings, booleans, numbers of
// predeclared types and maps and lists of them (what the generated
// definitions' defaults are); anything else fails the generation.
func (p *smdPrinter) value(v any) string {
	switch v := v.(type) {
	case map[string]any:
		parts := make([]string, 0, len(v))
		for _, k := range sortedKeys(v) {
			parts = append(parts, strconv.Quote(k)+": "+p.value(v[k]))
		}
		return "map[string]any{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, 0, len(v))
		for _, e := range v {
			parts = append(parts, p.value(e))
		}
		return "[]any{" + strings.Join(parts, ", ") + "}"
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return fmt.Sprintf("float64(%s)", strconv.FormatFloat(v, 'g', -1, 64))
	case float32:
		return fmt.Sprintf("float32(%s)", strconv.FormatFloat(float64(v), 'g', -1, 32))
	}
	// Other strings, booleans and integers, printed with their type (the
	// value is stored in an interface, so its type is part of it): the
	// generated code gives some defaults their API type, such as
	// v1.AzureDataDiskCachingMode("ReadWrite").
	if rv := reflect.ValueOf(v); rv.IsValid() {
		typ := rv.Type().String()
		if path := rv.Type().PkgPath(); path != "" {
			alias, ok := p.imports[path]
			if !ok {
				alias = fmt.Sprintf("smdpkg%d", len(p.imports))
				p.imports[path] = alias
			}
			typ = alias + "." + rv.Type().Name()
		}
		switch rv.Kind() {
		case reflect.String:
			return fmt.Sprintf("%s(%s)", typ, strconv.Quote(rv.String()))
		case reflect.Bool:
			return fmt.Sprintf("%s(%t)", typ, rv.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return fmt.Sprintf("%s(%d)", typ, rv.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return fmt.Sprintf("%s(%d)", typ, rv.Uint())
		}
	}
	if p.err == nil {
		p.err = fmt.Errorf("field default %#v (%T): the generator prints JSON values only", v, v)
	}
	return "nil"
}

// parserModels are the v3 definitions as the structured-merge-diff
// schema is built from: the served v3 schemas without the wrapping of
// references in allOf (schemaconv reads a reference either way) and
// without the group-version-kind extension (schemaconv does not read it;
// TestParserModels checks the schema is the same).
func parserModels(raw *rawDefinitions) map[string]*spec.Schema {
	out := make(map[string]*spec.Schema, len(raw.defs))
	for name, def := range raw.defs {
		s := &spec.Schema{
			VendorExtensible:   spec.VendorExtensible{Extensions: maps.Clone(def.Schema.Extensions)},
			SchemaProps:        def.Schema.SchemaProps,
			SwaggerSchemaProps: def.Schema.SwaggerSchemaProps,
		}
		delete(s.Extensions, common.ExtensionV2Schema)
		out[name] = s
	}
	return out
}

func compareGVK(a, b schema.GroupVersionKind) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	if c := strings.Compare(a.Version, b.Version); c != 0 {
		return c
	}
	return strings.Compare(a.Kind, b.Kind)
}
