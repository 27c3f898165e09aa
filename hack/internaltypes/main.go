// Command internaltypes writes pkg/registry/internaljson/types_generated.go:
// the layout of kube-apiserver's internal API types (the structs of
// k8s.io/kubernetes/pkg/apis/<group>), read as data with go/parser. Upstream's
// handwritten validation runs on those types, and field.Error renders a
// struct value with encoding/json, so their layout (Go field names, order,
// embedded structs) is what a client sees in an error message. kapi does not
// import k8s.io/kubernetes; it keeps this table instead.
//
// Usage (from the repository root):
//
//	go run ./hack/internaltypes -src $(go env GOMODCACHE)/k8s.io/kubernetes@v1.37.2/pkg/apis \
//	    -version v1.37.2 -o pkg/registry/internaljson/types_generated.go
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

const apisPrefix = "k8s.io/kubernetes/pkg/apis/"

type field struct {
	name     string
	typ      string
	embedded bool
}

type typeInfo struct {
	fields     []field
	isStruct   bool
	underlying string
}

func main() {
	src := flag.String("src", "", "directory k8s.io/kubernetes@<version>/pkg/apis")
	version := flag.String("version", "", "k8s.io/kubernetes version the directory holds, for the header")
	out := flag.String("o", "", "output file")
	flag.Parse()
	if *src == "" || *version == "" || *out == "" {
		log.Fatal("usage: internaltypes -src DIR -version VERSION -o FILE")
	}
	types, err := readAll(*src)
	if err != nil {
		log.Fatal(err)
	}
	code, err := render(types, *version)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		log.Fatal(err)
	}
}

// readAll parses the Go files (not tests, not generated code) directly in
// each group directory under src.
func readAll(src string) (map[string]typeInfo, error) {
	groups, err := os.ReadDir(src)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", src, err)
	}
	types := map[string]typeInfo{}
	for _, g := range groups {
		if !g.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(src, g.Name(), "*.go"))
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", g.Name(), err)
		}
		for _, f := range files {
			base := filepath.Base(f)
			if strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "zz_generated") {
				continue
			}
			if err := readFile(f, g.Name(), types); err != nil {
				return nil, err
			}
		}
	}
	return types, nil
}

func readFile(path, group string, types map[string]typeInfo) error {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	if file.Name.Name != group {
		// Only the group's own package (doc-only or other packages are skipped).
		return nil
	}
	imports := map[string]string{}
	for _, imp := range file.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return fmt.Errorf("%s: import %s: %w", path, imp.Path.Value, err)
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
	}
	r := resolver{group: group, imports: imports, pos: fset, file: path}
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			if ts.TypeParams != nil {
				return fmt.Errorf("%s: %s: generic types are not supported", path, ts.Name.Name)
			}
			key := group + "." + ts.Name.Name
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				u, err := r.expr(ts.Type)
				if err != nil {
					return err
				}
				types[key] = typeInfo{underlying: u}
				continue
			}
			info := typeInfo{isStruct: true}
			for _, f := range st.Fields.List {
				if f.Tag != nil {
					tag, err := strconv.Unquote(f.Tag.Value)
					if err != nil {
						return fmt.Errorf("%s: tag %s: %w", path, f.Tag.Value, err)
					}
					if _, ok := reflect.StructTag(tag).Lookup("json"); ok {
						// The renderer names fields by their Go names.
						return fmt.Errorf("%s: %s has a json tag; internaljson does not handle tags", path, key)
					}
				}
				typ, err := r.expr(f.Type)
				if err != nil {
					return err
				}
				if len(f.Names) == 0 {
					name := typ
					name = strings.TrimPrefix(name, "*")
					name = name[strings.LastIndex(name, ".")+1:]
					info.fields = append(info.fields, field{name: name, typ: typ, embedded: true})
					continue
				}
				for _, n := range f.Names {
					if !n.IsExported() {
						continue
					}
					info.fields = append(info.fields, field{name: n.Name, typ: typ})
				}
			}
			types[key] = info
		}
	}
	return nil
}

type resolver struct {
	group   string
	imports map[string]string
	pos     *token.FileSet
	file    string
}

// expr writes a type expression in the table's notation: a Go basic type by
// name; "group.Name" for an internal type; "@importpath.Name" for a type
// of another package (apimachinery's), which keeps its own JSON form;
// "*T", "[]T", "map[K]V"; "any" for interfaces.
func (r resolver) expr(e ast.Expr) (string, error) {
	switch e := e.(type) {
	case *ast.Ident:
		if isBasic(e.Name) {
			return e.Name, nil
		}
		return r.group + "." + e.Name, nil
	case *ast.SelectorExpr:
		pkg, ok := e.X.(*ast.Ident)
		if !ok {
			return "", r.errorf(e, "unexpected selector")
		}
		p, ok := r.imports[pkg.Name]
		if !ok {
			return "", r.errorf(e, "unknown package %s", pkg.Name)
		}
		if g, ok := strings.CutPrefix(p, apisPrefix); ok && !strings.Contains(g, "/") {
			return g + "." + e.Sel.Name, nil
		}
		return "@" + p + "." + e.Sel.Name, nil
	case *ast.StarExpr:
		s, err := r.expr(e.X)
		return "*" + s, err
	case *ast.ArrayType:
		if e.Len != nil {
			return "", r.errorf(e, "arrays are not supported")
		}
		s, err := r.expr(e.Elt)
		return "[]" + s, err
	case *ast.MapType:
		k, err := r.expr(e.Key)
		if err != nil {
			return "", err
		}
		v, err := r.expr(e.Value)
		return "map[" + k + "]" + v, err
	case *ast.InterfaceType:
		return "any", nil
	}
	return "", r.errorf(e, "unsupported type expression %T", e)
}

func (r resolver) errorf(e ast.Node, format string, args ...any) error {
	return fmt.Errorf("%s: %s", r.pos.Position(e.Pos()), fmt.Sprintf(format, args...))
}

func isBasic(name string) bool {
	switch name {
	case "bool", "string", "byte", "rune", "int", "int8", "int16", "int32", "int64",
		"uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "any":
		return true
	}
	return false
}

func render(types map[string]typeInfo, version string) ([]byte, error) {
	keys := make([]string, 0, len(types))
	for k := range types {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by hack/internaltypes; DO NOT EDIT.\n")
	fmt.Fprintf(&b, "// Source: k8s.io/kubernetes@%s/pkg/apis/*/*.go (internal API types, read as data).\n\n", version)
	fmt.Fprintf(&b, "package internaljson\n\n")
	fmt.Fprintf(&b, "// sourceVersion is the k8s.io/kubernetes version internalTypes was read from.\n")
	fmt.Fprintf(&b, "const sourceVersion = %q\n\n", version)
	fmt.Fprintf(&b, "// internalTypesTable builds the layout of upstream's internal API types, by\n")
	fmt.Fprintf(&b, "// \"group.Name\". It is a function, not a package-level map, so that its\n")
	fmt.Fprintf(&b, "// code (about 190 KB) and allocations run on the first validation error that\n")
	fmt.Fprintf(&b, "// needs it, not in every process's initialisation (internalTypes).\n")
	fmt.Fprintf(&b, "func internalTypesTable() map[string]internalType {\n")
	fmt.Fprintf(&b, "return map[string]internalType{\n")
	for _, k := range keys {
		t := types[k]
		if !t.isStruct {
			fmt.Fprintf(&b, "%q: {underlying: %q},\n", k, t.underlying)
			continue
		}
		fmt.Fprintf(&b, "%q: {fields: []internalField{\n", k)
		for _, f := range t.fields {
			if f.embedded {
				fmt.Fprintf(&b, "{%q, %q, true},\n", f.name, f.typ)
			} else {
				fmt.Fprintf(&b, "{%q, %q, false},\n", f.name, f.typ)
			}
		}
		fmt.Fprintf(&b, "}},\n")
	}
	fmt.Fprintf(&b, "}\n}\n")
	return format.Source(b.Bytes())
}
