package fieldmanager

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// TestNewSharesBuiltInManagers checks that New returns one manager per
// built-in (kind, subresource, reset fields) in a process, and a new one
// whenever any of them differs or the manager has anything of its own.
func TestNewSharesBuiltInManagers(t *testing.T) {
	kind := schema.GroupVersionKind{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "FlowSchema"}
	reset := func(paths ...string) map[fieldpath.APIVersion]*fieldpath.Set {
		s := fieldpath.NewSet()
		for _, p := range paths {
			s.Insert(fieldpath.MakePathOrDie(p))
		}
		return map[fieldpath.APIVersion]*fieldpath.Set{"flowcontrol.apiserver.k8s.io/v1": s}
	}
	mustNew := func(c Config) *Manager {
		t.Helper()
		m, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	spec := reset("spec")
	a := mustNew(Config{Kind: kind, Subresource: "status", ResetFields: spec})
	if b := mustNew(Config{Kind: kind, Subresource: "status", ResetFields: reset("spec"), Scheme: scheme.Scheme}); b != a {
		t.Errorf("same kind, subresource and reset fields: got another manager")
	}
	// Changing the caller's set afterwards must not change what later
	// configurations are compared with.
	spec["flowcontrol.apiserver.k8s.io/v1"].Insert(fieldpath.MakePathOrDie("metadata"))
	if b := mustNew(Config{Kind: kind, Subresource: "status", ResetFields: reset("spec")}); b != a {
		t.Errorf("after the first caller changed its set: got another manager")
	}
	for name, c := range map[string]Config{
		"other reset fields":   {Kind: kind, Subresource: "status", ResetFields: reset("status")},
		"no reset fields":      {Kind: kind, Subresource: "status"},
		"other subresource":    {Kind: kind, ResetFields: reset("spec")},
		"other kind":           {Kind: kind.GroupVersion().WithKind("PriorityLevelConfiguration"), Subresource: "status", ResetFields: reset("spec")},
		"own type converter":   {Kind: kind, Subresource: "status", ResetFields: reset("spec"), TypeConverter: managedfields.NewDeducedTypeConverter()},
		"custom resource":      {Kind: kind, Subresource: "status", ResetFields: reset("spec"), CustomResource: true},
		"own read convertor":   {Kind: kind, Subresource: "status", ResetFields: reset("spec"), ReadConvertor: scheme.Scheme},
		"own scheme's creater": {Kind: kind, Subresource: "status", ResetFields: reset("spec"), Creater: scheme.Scheme},
	} {
		m := mustNew(c)
		if m == a {
			t.Errorf("%s: got the shared manager of FlowSchema/status resetting spec", name)
		}
		if again := mustNew(c); (again == m) != (c.TypeConverter == nil && !c.CustomResource && c.ReadConvertor == nil && c.Creater == nil) {
			t.Errorf("%s: second New shared %v", name, again == m)
		}
	}
}
