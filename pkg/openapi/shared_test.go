package openapi_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kapi-dev/kapi/pkg/openapi"
)

// The shared parameters' names are kube-apiserver v1.37.2's: these are
// in its /openapi/v2 (kapitest/testdata/openapi-v1.37.2/v2.json.gz) with
// these contents.
func TestSharedParameterNamesAreUpstreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		want string
		prm  spec.Parameter
	}{
		{"pretty-tJGM1-ng", spec.Parameter{
			ParamProps:        spec.ParamProps{Name: "pretty", In: "query", Description: "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."},
			SimpleSchema:      spec.SimpleSchema{Type: "string"},
			CommonValidations: spec.CommonValidations{UniqueItems: true},
		}},
		{"body-78PwaGsr", spec.Parameter{ParamProps: spec.ParamProps{
			Name: "body", In: "body", Required: true, Schema: spec.RefSchema("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"),
		}}},
		{"body-2Y1dVQaQ", spec.Parameter{ParamProps: spec.ParamProps{
			Name: "body", In: "body", Schema: spec.RefSchema("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"),
		}}},
	} {
		got, err := openapi.SharedParameterName(tc.prm)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}

// Every parameter is shared but the name, dryRun and fieldValidation and a
// body of the resource's own kind, as kube-openapi shares them.
func TestV2SharesParametersAsUpstream(t *testing.T) {
	t.Parallel()
	defs := openapi.Default()
	gv := schema.GroupVersion{Version: "v1"}
	p, err := defs.Paths(gv, openapi.ResourcesOf(gv, builtin["configmaps"].resources))
	if err != nil {
		t.Fatal(err)
	}
	paths, shared, err := p.V2WithSharedParameters()
	if err != nil {
		t.Fatal(err)
	}
	inline := map[string]bool{}
	refs := map[string]bool{}
	for path, item := range paths {
		ps := append([]spec.Parameter(nil), item.Parameters...)
		for _, op := range []*spec.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op != nil {
				ps = append(ps, op.Parameters...)
			}
		}
		for _, prm := range ps {
			if ref := prm.Ref.String(); ref != "" {
				name := strings.TrimPrefix(ref, "#/parameters/")
				if _, ok := shared[name]; !ok {
					t.Errorf("%s: %s is not among the shared parameters", path, ref)
				}
				refs[name] = true
				continue
			}
			key := prm.In + " " + prm.Name
			if prm.In == "body" {
				key += " " + prm.Schema.Ref.String()
			}
			inline[key] = true
		}
	}
	wantInline := map[string]bool{
		"path name": true, "query dryRun": true, "query fieldValidation": true,
		"body body #/definitions/io.k8s.api.core.v1.ConfigMap": true,
	}
	for k := range inline {
		if !wantInline[k] {
			t.Errorf("%s is inline, not shared", k)
		}
	}
	for k := range wantInline {
		if !inline[k] {
			t.Errorf("%s is not inline", k)
		}
	}
	for _, n := range []string{"pretty-tJGM1-ng", "body-78PwaGsr", "body-2Y1dVQaQ", "namespace-vgWSWtn3", "watch-XNNPZGbK"} {
		if !refs[n] {
			t.Errorf("no reference to %s", n)
		}
	}
	if len(refs) != len(shared) {
		t.Errorf("%d shared parameters, %d referenced", len(shared), len(refs))
	}
}
