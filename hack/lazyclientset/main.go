// Command lazyclientset writes pkg/client/lazy/groups_generated.go from
// client-go's kubernetes/clientset.go: for each group version accessor of
// the Clientset (e.g. CoreV1() corev1.CoreV1Interface { return
// c.coreV1 }), a field kept behind a sync.Once and an accessor that makes
// the client on its first call. Run by go generate in pkg/client/lazy.
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
	"os/exec"
	"path/filepath"
	"strings"
)

// clientGo is the client-go whose clientset the lazy one mirrors (go.mod's).
const clientGo = "k8s.io/client-go@v0.37.2"

// accessor is one group version method of the Clientset.
type accessor struct {
	name, alias, iface, field string
}

func main() {
	out := flag.String("out", "groups_generated.go", "file to write")
	flag.Parse()
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		log.Fatalf("go env GOMODCACHE: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(modcache)), clientGo, "kubernetes", "clientset.go")
	f, err := parser.ParseFile(token.NewFileSet(), src, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	imports := map[string]string{} // alias -> import path, typed clients only
	var order []string
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if !strings.Contains(path, "kubernetes/typed/") || imp.Name == nil {
			continue
		}
		imports[imp.Name.Name] = path
		order = append(order, imp.Name.Name)
	}
	var accessors []accessor
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || fn.Type.Results == nil || len(fn.Body.List) != 1 {
			continue
		}
		sel, ok := fn.Type.Results.List[0].Type.(*ast.SelectorExpr)
		if !ok {
			continue
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || imports[pkg.Name] == "" {
			continue
		}
		ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 1 {
			continue
		}
		field, ok := ret.Results[0].(*ast.SelectorExpr)
		if !ok {
			continue
		}
		accessors = append(accessors, accessor{fn.Name.Name, pkg.Name, sel.Sel.Name, field.Sel.Name})
	}
	if len(accessors) != len(order) {
		log.Fatalf("%d typed client imports but %d accessors in %s", len(order), len(accessors), src)
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated from %s/kubernetes/clientset.go by\n// hack/lazyclientset; DO NOT EDIT.\n\npackage lazy\n\nimport (\n\t\"sync\"\n\n", clientGo)
	for _, alias := range order {
		fmt.Fprintf(&b, "\t%s %q\n", alias, imports[alias])
	}
	b.WriteString(")\n\n// groups holds each API group version's client, made on first use.\ntype groups struct {\n")
	for _, a := range accessors {
		fmt.Fprintf(&b, "\t%sOnce sync.Once\n\t%s *%s.%sClient\n", a.field, a.field, a.alias, strings.TrimSuffix(a.iface, "Interface"))
	}
	b.WriteString("}\n")
	for _, a := range accessors {
		fmt.Fprintf(&b, "\n// %s returns the %sClient, made on the first call.\nfunc (c *Clientset) %s() %s.%s {\n\tc.%sOnce.Do(func() { c.%s = must(c, %s.NewForConfigAndClient) })\n\treturn c.%s\n}\n",
			a.name, a.name, a.name, a.alias, a.iface, a.field, a.field, a.alias, a.field)
	}
	code, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatalf("generated code does not parse: %v", err)
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		log.Fatal(err)
	}
}
