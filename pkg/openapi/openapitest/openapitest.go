package openapitest

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

//go:embed testdata/*.txt
var testdata embed.FS

// Set is one set of expected operations.
type Set struct {
	// Paths matches the paths the set covers.
	Paths *regexp.Regexp
	// Operations are the expected lines, sorted.
	Operations []string
}

// Expected returns the set testdata/<name>.txt.
func Expected(name string) (*Set, error) {
	b, err := testdata.ReadFile("testdata/" + name + ".txt")
	if err != nil {
		return nil, err
	}
	s := &Set{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "# paths:"):
			if s.Paths, err = regexp.Compile(strings.TrimSpace(strings.TrimPrefix(line, "# paths:"))); err != nil {
				return nil, fmt.Errorf("%s: paths: %w", name, err)
			}
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			s.Operations = append(s.Operations, strings.Join(strings.Fields(line), " "))
		}
	}
	if s.Paths == nil {
		return nil, fmt.Errorf("%s: no '# paths:' line", name)
	}
	sort.Strings(s.Operations)
	return s, sc.Err()
}

// Select returns the lines of ops whose path the set covers, sorted.
func (s *Set) Select(ops []string) []string {
	var out []string
	for _, op := range ops {
		if f := strings.Fields(op); len(f) > 1 && s.Paths.MatchString(f[1]) {
			out = append(out, op)
		}
	}
	sort.Strings(out)
	return out
}

// Diff returns the lines missing from got and those got has in excess,
// both empty when got (already selected) equals the set.
func (s *Set) Diff(got []string) (missing, extra []string) {
	for _, w := range s.Operations {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(s.Operations, g) {
			extra = append(extra, g)
		}
	}
	return missing, extra
}

var methods = []string{"get", "put", "post", "delete", "patch", "head", "options"}

// parameter is the part of a v2 or v3 parameter the lines use.
type parameter struct {
	Ref  string `json:"$ref"`
	Name string `json:"name"`
	In   string `json:"in"`
}

type operation struct {
	ID         string          `json:"operationId"`
	Action     string          `json:"x-kubernetes-action"`
	GVK        json.RawMessage `json:"x-kubernetes-group-version-kind"`
	Parameters []parameter     `json:"parameters"`
}

// SummarizeV2 reduces an OpenAPI v2 document to its operations' lines,
// resolving shared parameters ("#/parameters/...").
func SummarizeV2(doc []byte) ([]string, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Parameters map[string]parameter                  `json:"parameters"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("decode openapi v2: %w", err)
	}
	return summarize(d.Paths, func(ref string) (parameter, bool) {
		p, ok := d.Parameters[strings.TrimPrefix(ref, "#/parameters/")]
		return p, ok && strings.HasPrefix(ref, "#/parameters/")
	})
}

// SummarizeV3 reduces an OpenAPI v3 document to its operations' lines,
// resolving shared parameters ("#/components/parameters/...").
func SummarizeV3(doc []byte) ([]string, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]parameter `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("decode openapi v3: %w", err)
	}
	return summarize(d.Paths, func(ref string) (parameter, bool) {
		p, ok := d.Components.Parameters[strings.TrimPrefix(ref, "#/components/parameters/")]
		return p, ok && strings.HasPrefix(ref, "#/components/parameters/")
	})
}

func summarize(paths map[string]map[string]json.RawMessage, resolve func(string) (parameter, bool)) ([]string, error) {
	var out []string
	for path, item := range paths {
		names := func(ps []parameter) ([]string, error) {
			var n []string
			for _, p := range ps {
				if p.Ref != "" {
					r, ok := resolve(p.Ref)
					if !ok {
						return nil, fmt.Errorf("%s: unresolved parameter %s", path, p.Ref)
					}
					p = r
				}
				if p.In != "body" {
					n = append(n, p.Name)
				}
			}
			return n, nil
		}
		var common []parameter
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &common); err != nil {
				return nil, fmt.Errorf("%s: parameters: %w", path, err)
			}
		}
		shared, err := names(common)
		if err != nil {
			return nil, err
		}
		for _, m := range methods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op operation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, path, err)
			}
			own, err := names(op.Parameters)
			if err != nil {
				return nil, err
			}
			params := append(slices.Clone(shared), own...)
			sort.Strings(params)
			out = append(out, strings.Join([]string{
				strings.ToUpper(m), path, orDash(op.ID), orDash(op.Action), gvkOf(op.GVK), orDash(strings.Join(params, ",")),
			}, " "))
		}
	}
	sort.Strings(out)
	return out, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// gvkOf renders an operation's x-kubernetes-group-version-kind (one
// object) as apiVersion/Kind.
func gvkOf(raw json.RawMessage) string {
	var g struct{ Group, Version, Kind string }
	if len(raw) == 0 || json.Unmarshal(raw, &g) != nil || g.Kind == "" {
		return "-"
	}
	if g.Group == "" {
		return g.Version + "/" + g.Kind
	}
	return g.Group + "/" + g.Version + "/" + g.Kind
}
