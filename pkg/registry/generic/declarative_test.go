package generic

import (
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestOrderDeclarative(t *testing.T) {
	hw := func(p string) *field.Error { return field.Invalid(field.NewPath(p), "", "hw") }
	dv := func(p string) *field.Error {
		return field.Required(field.NewPath(p), "").MarkCoveredByDeclarative().MarkBeta()
	}
	// As apimachinery's ValidateObjectMetaAccessor marks some of its errors.
	coveredNoLevel := func(p string) *field.Error {
		return field.Invalid(field.NewPath(p), "", "meta").MarkCoveredByDeclarative()
	}
	dup := func(p string) *field.Error {
		return field.Duplicate(field.NewPath(p), "x").MarkCoveredByDeclarative().MarkBeta()
	}
	alpha := func(p string) *field.Error {
		return field.Invalid(field.NewPath(p), "", "alpha").MarkAlpha().MarkCoveredByDeclarative()
	}
	for _, c := range []struct {
		name string
		obj  runtime.Object
		in   field.ErrorList
		want []string
	}{{
		name: "nothing marked keeps the list",
		obj:  &rbacv1.RoleBinding{},
		in:   field.ErrorList{hw("roleRef.name"), hw("subjects[0].name")},
		want: []string{"roleRef.name hw", "subjects[0].name hw"},
	}, {
		// Upstream's handwritten errors pass through ErrorList.Filter
		// (ToAggregate keeps one of each message) for every built-in type.
		name: "a built-in type's repeated handwritten errors once",
		obj:  &rbacv1.RoleBinding{},
		in:   field.ErrorList{hw("roleRef.name"), hw("subjects[0].name"), hw("roleRef.name"), dv("subjects[1].name"), dv("subjects[1].name")},
		want: []string{"roleRef.name hw", "subjects[0].name hw", "subjects[1].name dv", "subjects[1].name dv"},
	}, {
		name: "other types' repeated errors kept",
		obj:  &unstructured.Unstructured{},
		in:   field.ErrorList{hw("spec.a"), hw("spec.a")},
		want: []string{"spec.a hw", "spec.a hw"},
	}, {
		// RoleBinding declares subjects before roleRef (k8s.io/api@v0.37.2
		// rbac/v1/types.go), the order Validate_RoleBinding visits them.
		name: "marked errors last, in field declaration order",
		obj:  &rbacv1.RoleBinding{},
		in:   field.ErrorList{dv("roleRef.name"), hw("roleRef.kind"), dv("subjects[1].name"), dv("subjects[0].name")},
		want: []string{"roleRef.kind hw", "subjects[0].name dv", "subjects[1].name dv", "roleRef.name dv"},
	}, {
		name: "alpha coverage is not enforced and stays in place",
		obj:  &rbacv1.RoleBinding{},
		in:   field.ErrorList{alpha("roleRef"), dv("subjects[0].name"), hw("metadata.name")},
		want: []string{"roleRef alpha", "metadata.name hw", "subjects[0].name dv"},
	}, {
		name: "covered without a level stays in place",
		obj:  &rbacv1.RoleBinding{},
		in:   field.ErrorList{coveredNoLevel("metadata.generation"), dv("roleRef.name"), hw("metadata.finalizers")},
		want: []string{"metadata.generation meta", "metadata.finalizers hw", "roleRef.name dv"},
	}, {
		// Through pointers, inlined ObjectMeta/TypeMeta and nested structs:
		// Deployment{TypeMeta, ObjectMeta, Spec{Replicas, Selector, Template,
		// ...}}; a field sorts before its members, map keys keep their order.
		name: "nested, pointers, parents first, maps stable",
		obj:  &appsv1.Deployment{},
		in: field.ErrorList{
			dv("spec.template.spec.containers[0].name"), dv("spec.selector"), dv("spec.replicas"),
			dv("metadata.labels[b]"), dv("metadata.labels[a]"), dv("spec.template"), dv("spec.nope.x"), dv("spec"),
		},
		want: []string{
			"metadata.labels[b] dv", "metadata.labels[a] dv", "spec dv", "spec.replicas dv", "spec.selector dv",
			"spec.template dv", "spec.template.spec.containers[0].name dv", "spec.nope.x dv",
		},
	}, {
		// unionSpec's validator checks the union of a and b with type
		// before its fields (registered in init below), as upstream's
		// Validate_PriorityLevelConfigurationSpec: errors at a and b sort
		// before type's, errors below a keep a's field position.
		name: "type-level rules before the fields",
		obj:  &unionObject{},
		in:   field.ErrorList{dv("spec.a.x"), dv("spec.type"), dv("spec.a"), dv("spec.b"), hw("spec.type")},
		want: []string{"spec.type hw", "spec.b dv", "spec.a dv", "spec.type dv", "spec.a.x dv"},
	}, {
		// A list's uniqueness check runs before its items are walked
		// (Validate_Role: rules' items; duplicates as ValSliceUnique reports
		// them, on the later item).
		name: "duplicates before the items, after the list's own checks",
		obj:  &rbacv1.Role{},
		in:   field.ErrorList{dv("rules[0].verbs"), dup("rules[3]"), dv("rules"), dup("rules[2]"), dv("rules[1].verbs")},
		want: []string{"rules dv", "rules[2] dup", "rules[3] dup", "rules[0].verbs dv", "rules[1].verbs dv"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, e := range orderDeclarative(c.obj, c.in) {
				kind := e.Detail
				if e.CoveredByDeclarative && e.IsBeta() {
					kind = "dv"
					if e.Type == field.ErrorTypeDuplicate {
						kind = "dup"
					}
				}
				got = append(got, e.Field+" "+kind)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestSplitFieldPath(t *testing.T) {
	got := splitFieldPath("metadata.labels[a.b/c].x[3]")
	want := []pathStep{{name: "metadata"}, {name: "labels"}, {name: "a.b/c", index: true}, {name: "x"}, {name: "3", index: true}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// unionObject is a stored object whose spec is a union of a and b
// discriminated by type.
type unionObject struct {
	metav1.TypeMeta `json:",inline"`
	Spec            unionSpec `json:"spec"`
}

type unionSpec struct {
	Type string `json:"type"`
	A    *struct {
		X int `json:"x"`
	} `json:"a"`
	B *struct{ Y bool } `json:"b"`
}

func (o *unionObject) DeepCopyObject() runtime.Object { c := *o; return &c }

func init() {
	RegisterDeclarativeTypeRules(reflect.TypeOf(unionSpec{}), "b", "a")
}
