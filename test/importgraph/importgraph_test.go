package importgraph

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kapi-dev/kapi"

// pkg is what `go list -json` says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages returns every package of the module, keyed by path
// relative to the module ("pkg/server/filters"), with their imports and
// transitive dependencies as built: test files do not count.
func listPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		p.ImportPath = rel(p.ImportPath)
		for i := range p.Imports {
			p.Imports[i] = rel(p.Imports[i])
		}
		for i := range p.Deps {
			p.Deps[i] = rel(p.Deps[i])
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs
}

// rel is a module package's path relative to the module; other paths stay
// as they are.
func rel(path string) string {
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r
	}
	return path
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// sharedLibraries live under an API server but are libraries of the whole
// chain: the CEL environment and libraries (and the structural schema
// they type objects with) of CRD validation rules are also those of
// admission policies and webhook match conditions, as upstream shares
// k8s.io/apiserver/pkg/cel. They import nothing else of their server;
// moving them to pkg/cel is the cleaner layout, not yet done.
var sharedLibraries = []string{"pkg/apiextensions/cel", "pkg/apiextensions/schema"}

// servers are the API servers of the chain: none may import another.
var servers = []string{"pkg/aggregator", "pkg/apiextensions", "pkg/controlplane"}

// rule forbids the packages that from selects to depend, directly or not,
// on those forbidden selects.
type rule struct {
	name      string
	from      func(path string) bool
	forbidden func(from, dep string) bool
}

var rules = []rule{
	{
		name:      "pkg/endpoints does not import pkg/server",
		from:      func(p string) bool { return under(p, "pkg/endpoints") },
		forbidden: func(_, dep string) bool { return under(dep, "pkg/server") },
	},
	{
		name: "no API server imports another's packages",
		from: func(p string) bool { return slices.ContainsFunc(servers, func(s string) bool { return under(p, s) }) },
		forbidden: func(from, dep string) bool {
			if slices.ContainsFunc(sharedLibraries, func(l string) bool { return under(dep, l) }) {
				return false
			}
			for _, s := range servers {
				if under(dep, s) && !under(from, s) {
					return true
				}
			}
			return false
		},
	},
	{
		name: "pkg/registry imports neither pkg/server nor an API server",
		from: func(p string) bool { return under(p, "pkg/registry") },
		forbidden: func(_, dep string) bool {
			return under(dep, "pkg/server") || slices.ContainsFunc(servers, func(s string) bool { return under(dep, s) })
		},
	},
}

// TestNoUpwardImports fails for every package that depends on one a rule
// forbids it, naming the chain of imports that leads there.
func TestNoUpwardImports(t *testing.T) {
	pkgs := listPackages(t)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			var from []string
			for path := range pkgs {
				if r.from(path) {
					from = append(from, path)
				}
			}
			if len(from) == 0 {
				t.Fatal("the rule selects no package: the layout changed, update the rule")
			}
			slices.Sort(from)
			for _, path := range from {
				// Every forbidden direct import; failing those, the first
				// forbidden dependency further down, with its chain.
				direct := false
				for _, imp := range pkgs[path].Imports {
					if r.forbidden(path, imp) {
						t.Errorf("%s imports %s", path, imp)
						direct = true
					}
				}
				if direct {
					continue
				}
				for _, dep := range pkgs[path].Deps {
					if r.forbidden(path, dep) {
						t.Errorf("%s depends on %s: %s", path, dep, strings.Join(importChain(pkgs, path, dep), " -> "))
						break
					}
				}
			}
		})
	}
}

// importChain is a shortest chain of direct imports from one package to
// another it depends on.
func importChain(pkgs map[string]*pkg, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		if pkgs[p] == nil {
			continue
		}
		for _, imp := range pkgs[p].Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return []string{from, "...", to}
}

// The rules catch what they are meant to: each flags a made-up arrow of
// its kind and lets a lawful one through.
func TestRulesFlagUpwardArrows(t *testing.T) {
	for _, tc := range []struct {
		rule      int
		from, dep string
		want      bool
	}{
		{0, "pkg/endpoints/installer", "pkg/server", true},
		{0, "pkg/endpoints/handlers", "pkg/server/filters", true},
		{0, "pkg/endpoints/handlers", "pkg/registry/rest", false},
		{0, "pkg/endpoints/handlers", "pkg/serverless", false},
		{1, "pkg/aggregator", "pkg/controlplane/registry", true},
		{1, "pkg/apiextensions/conversion", "pkg/aggregator/proxy", true},
		{1, "pkg/controlplane/registry/secret", "pkg/controlplane/registry", false},
		{1, "pkg/aggregator", "pkg/registry/generic", false},
		{2, "pkg/registry/generic", "pkg/server/filters", true},
		{2, "pkg/registry/rest", "pkg/apiextensions", true},
		{2, "pkg/registry/generic", "pkg/storage", false},
	} {
		r := rules[tc.rule]
		if !r.from(tc.from) {
			t.Errorf("%s: does not select %s", r.name, tc.from)
			continue
		}
		if got := r.forbidden(tc.from, tc.dep); got != tc.want {
			t.Errorf("%s: %s -> %s forbidden: got %v, want %v", r.name, tc.from, tc.dep, got, tc.want)
		}
	}
}
