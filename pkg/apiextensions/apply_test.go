package apiextensions

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

func startApplyServer(t *testing.T) (*testServer, dynamic.ResourceInterface) {
	t.Helper()
	ts := startServer(t, serverOptions{})
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	crd := crdtest.ApplyCRD()
	if _, err := crds.Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	r := ts.dynamic(t).Resource(gvr("apply.example.com", "v1", "appliers")).Namespace("ns1")
	eventually(t, waitTimeout, "appliers served", func() bool {
		_, err := r.List(context.Background(), metav1.ListOptions{})
		return err == nil
	})
	return ts, r
}

func applied(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal([]byte("apiVersion: apply.example.com/v1\nkind: Applier\nmetadata: {name: a1}\n"+y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// managers returns "manager/operation/subresource" of each managedFields
// entry.
func managers(u *unstructured.Unstructured) []string {
	var out []string
	for _, e := range u.GetManagedFields() {
		s := e.Manager + "/" + string(e.Operation)
		if e.Subresource != "" {
			s += "/" + e.Subresource
		}
		out = append(out, s)
	}
	return out
}

func TestServerSideApply(t *testing.T) {
	_, r := startApplyServer(t)
	ctx := context.Background()
	apply := func(manager string, force bool, y string) (*unstructured.Unstructured, error) {
		return r.Apply(ctx, "a1", applied(t, y), metav1.ApplyOptions{FieldManager: manager, Force: force})
	}
	must := func(u *unstructured.Unstructured, err error) *unstructured.Unstructured {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return u
	}

	// Create by apply.
	u := must(apply("alice", false, "spec: {replicas: 1, ports: [{name: http, port: 80}], tags: [x], args: [a], selector: {k1: v1}, labels: {l1: v1}, value: 5}\n"))
	if got, want := managers(u), []string{"alice/Apply"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("managers after create: got %v, want %v", got, want)
	}

	// A second manager conflicting on replicas: 409 with upstream's message.
	_, err := apply("bob", false, "spec: {replicas: 2}\n")
	if !apierrors.IsConflict(err) {
		t.Fatalf("conflicting apply: got %v, want 409", err)
	}
	if want := `Apply failed with 1 conflict: conflict with "alice": .spec.replicas`; !strings.Contains(err.Error(), want) {
		t.Fatalf("conflict message: got %q, want it to contain %q", err.Error(), want)
	}

	// Merges by list key, set, granular map; atomic map conflicts.
	for _, tc := range []struct {
		name, manager, y string
		force            bool
		conflict         bool
		path             []string
		want             any
	}{
		{"list map merges by key", "bob", "spec: {ports: [{name: https, port: 443}]}\n", false, false, []string{"spec", "ports"},
			[]any{map[string]any{"name": "http", "port": int64(80)}, map[string]any{"name": "https", "port": int64(443)}}},
		{"set merges", "bob", "spec: {ports: [{name: https, port: 443}], tags: [z]}\n", false, false, []string{"spec", "tags"}, []any{"x", "z"}},
		{"granular map merges", "bob", "spec: {ports: [{name: https, port: 443}], tags: [z], labels: {l2: v2}}\n", false, false,
			[]string{"spec", "labels"}, map[string]any{"l1": "v1", "l2": "v2"}},
		{"atomic list conflicts", "bob", "spec: {args: [b]}\n", false, true, nil, nil},
		{"atomic map conflicts", "bob", "spec: {selector: {k2: v2}}\n", false, true, nil, nil},
		{"force takes the atomic map whole", "bob", "spec: {ports: [{name: https, port: 443}], tags: [z], labels: {l2: v2}, selector: {k2: v2}}\n", true, false,
			[]string{"spec", "selector"}, map[string]any{"k2": "v2"}},
		{"force takes replicas", "bob", "spec: {ports: [{name: https, port: 443}], tags: [z], labels: {l2: v2}, selector: {k2: v2}, replicas: 3}\n", true, false,
			[]string{"spec", "replicas"}, int64(3)},
		{"int-or-string takes a string", "alice", "spec: {ports: [{name: http, port: 80}], tags: [x], args: [a], labels: {l1: v1}, value: 50%}\n", false, false,
			[]string{"spec", "value"}, "50%"},
		{"fields another manager took stay", "alice", "spec: {ports: [{name: http, port: 80}], tags: [x], args: [a], labels: {l1: v1}, value: 50%}\n", false, false,
			[]string{"spec", "replicas"}, int64(3)},
		{"dropping an owned field removes it", "alice", "spec: {ports: [{name: http, port: 80}], tags: [x], labels: {l1: v1}, value: 50%}\n", false, false,
			[]string{"spec", "args"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := apply(tc.manager, tc.force, tc.y)
			if tc.conflict {
				if !apierrors.IsConflict(err) {
					t.Fatalf("got %v, want a conflict", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v, _, _ := unstructured.NestedFieldNoCopy(got.Object, tc.path...)
			if !reflect.DeepEqual(v, tc.want) {
				t.Fatalf("%v: got %#v, want %#v", tc.path, v, tc.want)
			}
		})
	}

	// A non-apply write is an Update entry.
	cur := must(r.Get(ctx, "a1", metav1.GetOptions{}))
	_ = unstructured.SetNestedField(cur.Object, "free", "spec", "extra", "anything")
	cur = must(r.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "carol"}))
	if got := managers(cur); !contains(got, "carol/Update") {
		t.Fatalf("managers after update: got %v, want carol/Update among them", got)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Apply through /status owns status only; the main resource resets
// status (its manager never owns it).
func TestServerSideApplyStatus(t *testing.T) {
	_, r := startApplyServer(t)
	ctx := context.Background()
	u, err := r.Apply(ctx, "a1", applied(t, "spec: {replicas: 1}\nstatus: {phase: ignored}\n"), metav1.ApplyOptions{FieldManager: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := u.Object["status"]; ok {
		t.Fatalf("main resource apply kept status: %v", u.Object["status"])
	}
	s, err := r.ApplyStatus(ctx, "a1", applied(t, "spec: {replicas: 9}\nstatus: {phase: Running}\n"), metav1.ApplyOptions{FieldManager: "ctrl"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(s.Object, "status", "phase"); got != "Running" {
		t.Fatalf("status.phase: got %q, want Running", got)
	}
	if got, _, _ := unstructured.NestedInt64(s.Object, "spec", "replicas"); got != 1 {
		t.Fatalf("spec.replicas after /status apply: got %d, want 1", got)
	}
	got := managers(s)
	sort.Strings(got)
	if want := []string{"ctrl/Apply/status", "main/Apply"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("managers: got %v, want %v", got, want)
	}
	for _, e := range s.GetManagedFields() {
		if e.Manager == "ctrl" && strings.Contains(string(e.FieldsV1.Raw), "spec") {
			t.Fatalf("/status manager owns spec: %s", e.FieldsV1.Raw)
		}
		if e.Manager == "main" && strings.Contains(string(e.FieldsV1.Raw), "status") {
			t.Fatalf("main manager owns status: %s", e.FieldsV1.Raw)
		}
	}
	// A later spec apply by another manager does not conflict with the
	// status manager.
	if _, err := r.Apply(ctx, "a1", applied(t, "spec: {replicas: 2}\n"), metav1.ApplyOptions{FieldManager: "main"}); err != nil {
		t.Fatal(err)
	}
}

// Apply over raw HTTP: undeclared fields are pruned (a 400 under Strict),
// strategic merge patch stays a 415 naming apply among the accepted types.
func TestServerSideApplyHTTP(t *testing.T) {
	ts, _ := startApplyServer(t)
	path := "/apis/apply.example.com/v1/namespaces/ns1/appliers/a1"
	for _, tc := range []struct {
		name, ct, body, query string
		code                  int
		contains              string
	}{
		{"create", "application/apply-patch+yaml", "apiVersion: apply.example.com/v1\nkind: Applier\nmetadata: {name: a1}\nspec: {replicas: 1}\n", "?fieldManager=m", http.StatusCreated, `"managedFields"`},
		{"no field manager", "application/apply-patch+yaml", "apiVersion: apply.example.com/v1\nkind: Applier\nmetadata: {name: a1}\n", "", http.StatusUnprocessableEntity, "fieldManager"},
		{"undeclared field pruned", "application/apply-patch+yaml", "apiVersion: apply.example.com/v1\nkind: Applier\nmetadata: {name: a1}\nspec: {replicas: 1, bogus: 1}\n", "?fieldManager=m", http.StatusOK, `"managedFields"`},
		{"undeclared field under Strict", "application/apply-patch+yaml", "apiVersion: apply.example.com/v1\nkind: Applier\nmetadata: {name: a1}\nspec: {bogus: 1}\n", "?fieldManager=m&fieldValidation=Strict", http.StatusBadRequest, `unknown field \"spec.bogus\"`},
		{"strategic merge", "application/strategic-merge-patch+json", `{"spec":{"replicas":2}}`, "", http.StatusUnsupportedMediaType, "application/apply-patch+yaml"},
		{"merge patch records an update", "application/merge-patch+json", `{"spec":{"replicas":2}}`, "?fieldManager=patcher", http.StatusOK, `"manager":"patcher","operation":"Update"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := ts.do(t, http.MethodPatch, path+tc.query, tc.body, "Content-Type", tc.ct)
			if code != tc.code || !strings.Contains(string(body), tc.contains) {
				t.Fatalf("got %d %s, want %d containing %q", code, body, tc.code, tc.contains)
			}
			if code < 300 {
				var u map[string]any
				if err := json.Unmarshal(body, &u); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// FuzzSchemaConversions feeds CRD schemas to the server-side apply type
// converter and the v2 conversion: errors are fine, panics are not.
func FuzzSchemaConversions(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"spec":{"type":"object","properties":{"l":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","properties":{"k":{"type":"string"}}}}}}}}`,
		`{"type":"object","properties":{"a":{"x-kubernetes-int-or-string":true},"b":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true},"c":{"type":"object","nullable":true}}}`,
		`{"type":"object","properties":{"m":{"type":"object","x-kubernetes-map-type":"atomic","additionalProperties":{"type":"string"}}}}`,
		`{"type":"array"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var s apiextensionsv1.JSONSchemaProps
		if err := json.Unmarshal([]byte(in), &s); err != nil {
			return
		}
		crd := crdtest.ApplyCRD()
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema = &s
		tc, err := customresource.BuildTypeConverter(crd, nil)
		if err == nil {
			u := applied(t, "spec: {a: 1}\n")
			_, _ = tc.ObjectToTyped(u)
		}
		_, _ = v2Schema(&s)
	})
}

// Managers of one version conflict with appliers of another (managed
// fields convert between versions, conversion strategy None).
func TestServerSideApplyAcrossVersions(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crd := crdtest.ApplyCRD()
	v2 := crd.Spec.Versions[0]
	v2.Name, v2.Storage = "v2", false
	crd.Spec.Versions = append(crd.Spec.Versions, v2)
	if _, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	r1 := ts.dynamic(t).Resource(gvr("apply.example.com", "v1", "appliers")).Namespace("ns1")
	r2 := ts.dynamic(t).Resource(gvr("apply.example.com", "v2", "appliers")).Namespace("ns1")
	eventually(t, waitTimeout, "appliers served", func() bool {
		_, err1 := r1.List(ctx, metav1.ListOptions{})
		_, err2 := r2.List(ctx, metav1.ListOptions{})
		return err1 == nil && err2 == nil
	})
	if _, err := r1.Apply(ctx, "a1", applied(t, "spec: {replicas: 1, tags: [x]}\n"), metav1.ApplyOptions{FieldManager: "alice"}); err != nil {
		t.Fatal(err)
	}
	in2 := applied(t, "spec: {replicas: 2, tags: [z]}\n")
	in2.SetAPIVersion("apply.example.com/v2")
	_, err := r2.Apply(ctx, "a1", in2, metav1.ApplyOptions{FieldManager: "bob"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "alice": .spec.replicas`) {
		t.Fatalf("v2 apply over a v1 manager: got %v, want a conflict with alice on .spec.replicas", err)
	}
	in2 = applied(t, "spec: {tags: [z]}\n")
	in2.SetAPIVersion("apply.example.com/v2")
	out, err := r2.Apply(ctx, "a1", in2, metav1.ApplyOptions{FieldManager: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedStringSlice(out.Object, "spec", "tags"); !reflect.DeepEqual(got, []string{"x", "z"}) {
		t.Fatalf("tags: got %v, want [x z]", got)
	}
}

// fieldsOf returns manager's managedFields entry (operation and
// subresource "") as decoded fieldsV1, or nil.
func fieldsOf(t *testing.T, u *unstructured.Unstructured, manager string, op metav1.ManagedFieldsOperationType) map[string]any {
	t.Helper()
	for _, e := range u.GetManagedFields() {
		if e.Manager != manager || e.Operation != op || e.Subresource != "" {
			continue
		}
		var m map[string]any
		if e.FieldsV1 == nil {
			t.Fatalf("%s/%s: no fieldsV1", manager, op)
		}
		if err := json.Unmarshal(e.FieldsV1.Raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	return nil
}

// TestManagedFieldsOfPrunedInput writes custom resources with fields the
// schema prunes (in spec, at the root, in metadata) with every kind of
// write: the fields go, are reported per fieldValidation, and the
// managedFields stored name exactly the fields kept (issue 11, point 3:
// before, the field manager saw the unpruned object, failed, and the
// object was stored without managedFields).
func TestManagedFieldsOfPrunedInput(t *testing.T) {
	ts, _ := startApplyServer(t)
	ctx := context.Background()
	var w warnings
	cfg := ts.config()
	cfg.WarningHandler = &w
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := dc.Resource(gvr("apply.example.com", "v1", "appliers")).Namespace("ns1")
	takeWarnings := func() []string {
		w.mu.Lock()
		defer w.mu.Unlock()
		out := w.msgs
		w.msgs = nil
		return out
	}
	withUnknown := func(name, spec string) *unstructured.Unstructured {
		u := applied(t, "spec: "+spec+"\ntop: 1\n")
		u.SetName(name)
		_ = unstructured.SetNestedField(u.Object, "z", "metadata", "zzz")
		return u
	}
	wantWarnings := []string{`unknown field "metadata.zzz"`, `unknown field "spec.bogus"`, `unknown field "top"`}
	check := func(t *testing.T, u *unstructured.Unstructured, manager string, op metav1.ManagedFieldsOperationType, want string) {
		t.Helper()
		stored, err := r.Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := stored.Object["top"]; ok {
			t.Errorf("top kept: %v", stored.Object)
		}
		if _, ok, _ := unstructured.NestedFieldNoCopy(stored.Object, "spec", "bogus"); ok {
			t.Errorf("spec.bogus kept: %v", stored.Object)
		}
		if _, ok, _ := unstructured.NestedFieldNoCopy(stored.Object, "metadata", "zzz"); ok {
			t.Errorf("metadata.zzz kept: %v", stored.Object)
		}
		var wantFields map[string]any
		if err := json.Unmarshal([]byte(want), &wantFields); err != nil {
			t.Fatal(err)
		}
		if got := fieldsOf(t, stored, manager, op); !reflect.DeepEqual(got, wantFields) {
			t.Errorf("managedFields of %s/%s: got %v, want %v (all: %v)", manager, op, got, wantFields, managers(stored))
		}
	}

	t.Run("apply creates", func(t *testing.T) {
		u, err := r.Apply(ctx, "a1", withUnknown("a1", "{replicas: 1, bogus: 1}"), metav1.ApplyOptions{FieldManager: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if got := takeWarnings(); !reflect.DeepEqual(got, wantWarnings) {
			t.Errorf("got warnings %q, want %q", got, wantWarnings)
		}
		check(t, u, "alice", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:replicas":{}}}`)
	})
	t.Run("apply updates", func(t *testing.T) {
		if _, err := r.Apply(ctx, "a1", withUnknown("a1", "{replicas: 1, tags: [x], bogus: 2}"), metav1.ApplyOptions{FieldManager: "alice"}); err != nil {
			t.Fatal(err)
		}
		takeWarnings()
		check(t, withUnknown("a1", "{}"), "alice", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:replicas":{},"f:tags":{"v:\"x\"":{}}}}`)
	})
	t.Run("strict apply is refused", func(t *testing.T) {
		// (ApplyOptions has no fieldValidation: a raw apply patch.)
		_, err := r.Patch(ctx, "a1", "application/apply-patch+yaml",
			[]byte("apiVersion: apply.example.com/v1\nkind: Applier\nmetadata: {name: a1, zzz: z}\nspec: {replicas: 5, bogus: 1}\ntop: 1\n"),
			metav1.PatchOptions{FieldManager: "alice", FieldValidation: metav1.FieldValidationStrict})
		want := `strict decoding error: unknown field "metadata.zzz", unknown field "spec.bogus", unknown field "top"`
		if !apierrors.IsBadRequest(err) || err.Error() != want {
			t.Fatalf("got %v, want BadRequest %q", err, want)
		}
		got, err := r.Get(ctx, "a1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); n != 1 {
			t.Errorf("spec.replicas: got %d after a refused apply, want 1", n)
		}
		if got := takeWarnings(); len(got) != 0 {
			t.Errorf("got warnings %q, want none (an error instead)", got)
		}
	})
	t.Run("create", func(t *testing.T) {
		u := withUnknown("c1", "{replicas: 2, bogus: 1}")
		if _, err := r.Create(ctx, u, metav1.CreateOptions{FieldManager: "creator"}); err != nil {
			t.Fatal(err)
		}
		if got := takeWarnings(); !reflect.DeepEqual(got, wantWarnings) {
			t.Errorf("got warnings %q, want %q", got, wantWarnings)
		}
		check(t, u, "creator", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{".":{},"f:replicas":{}}}`)
	})
	t.Run("update", func(t *testing.T) {
		cur, err := r.Get(ctx, "c1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(cur.Object, "b", "spec", "bogus")
		_ = unstructured.SetNestedStringSlice(cur.Object, []string{"t"}, "spec", "tags")
		if _, err := r.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "updater", FieldValidation: metav1.FieldValidationIgnore}); err != nil {
			t.Fatal(err)
		}
		if got := takeWarnings(); len(got) != 0 {
			t.Errorf("got warnings %q under Ignore, want none", got)
		}
		check(t, cur, "updater", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:tags":{".":{},"v:\"t\"":{}}}}`)
	})
	t.Run("merge patch", func(t *testing.T) {
		if _, err := r.Patch(ctx, "c1", "application/merge-patch+json", []byte(`{"top":1,"spec":{"bogus":1,"args":["a"]}}`), metav1.PatchOptions{FieldManager: "patcher"}); err != nil {
			t.Fatal(err)
		}
		if got, want := takeWarnings(), []string{`unknown field "spec.bogus"`, `unknown field "top"`}; !reflect.DeepEqual(got, want) {
			t.Errorf("got warnings %q, want %q", got, want)
		}
		check(t, withUnknown("c1", "{}"), "patcher", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:args":{}}}`)
		_, err := r.Patch(ctx, "c1", "application/json-patch+json", []byte(`[{"op":"add","path":"/spec/bogus","value":1}]`), metav1.PatchOptions{FieldManager: "patcher", FieldValidation: metav1.FieldValidationStrict})
		// As kube-apiserver v1.37.2 answers a strict patch of a custom
		// resource: a 422 on "patch", showing the patched object.
		if want := `strict decoding error: unknown field "spec.bogus"`; !apierrors.IsInvalid(err) ||
			!strings.HasPrefix(err.Error(), ` "" is invalid: patch: Invalid value: "{`) || !strings.HasSuffix(err.Error(), want) {
			t.Fatalf("strict JSON patch: got %v, want 422 on the patch ending %q", err, want)
		}
	})
}
