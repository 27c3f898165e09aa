package rbac

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	rbacv1 "k8s.io/api/rbac/v1"
)

// referenceObject is one bootstrap RBAC object as testdata/bootstrap-v1.37.2.json
// records it (see its "source" field: observed on a real kube-apiserver
// v1.37.2).
type referenceObject struct {
	Kind            string                  `json:"kind"`
	Namespace       string                  `json:"namespace"`
	Name            string                  `json:"name"`
	Labels          map[string]string       `json:"labels"`
	Annotations     map[string]string       `json:"annotations"`
	Rules           []rbacv1.PolicyRule     `json:"rules"`
	AggregationRule *rbacv1.AggregationRule `json:"aggregationRule"`
	Subjects        []rbacv1.Subject        `json:"subjects"`
	RoleRef         *rbacv1.RoleRef         `json:"roleRef"`
}

func (o referenceObject) key() string { return o.Kind + " " + o.Namespace + "/" + o.Name }

func readReferencePolicy(t *testing.T) map[string]referenceObject {
	t.Helper()
	raw, err := os.ReadFile("testdata/bootstrap-v1.37.2.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Source                                                 string
		ClusterRoles, ClusterRoleBindings, Roles, RoleBindings []referenceObject
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]referenceObject{}
	for _, list := range [][]referenceObject{doc.ClusterRoles, doc.ClusterRoleBindings, doc.Roles, doc.RoleBindings} {
		for _, o := range list {
			out[o.key()] = o
		}
	}
	if len(out) < 100 {
		t.Fatalf("testdata/bootstrap-v1.37.2.json: %d objects, want the whole bootstrap policy", len(out))
	}
	return out
}

// kapiPolicy is kapi's bootstrap policy in the reference's form.
func kapiPolicy(t *testing.T) map[string]referenceObject {
	t.Helper()
	out := map[string]referenceObject{}
	add := func(o referenceObject) {
		if _, dup := out[o.key()]; dup {
			t.Errorf("duplicate bootstrap object %s", o.key())
		}
		out[o.key()] = o
	}
	for _, r := range ClusterRoles() {
		add(referenceObject{Kind: "ClusterRole", Name: r.Name, Labels: r.Labels, Annotations: r.Annotations, Rules: r.Rules, AggregationRule: r.AggregationRule})
	}
	for _, b := range ClusterRoleBindings() {
		add(referenceObject{Kind: "ClusterRoleBinding", Name: b.Name, Labels: b.Labels, Annotations: b.Annotations, Subjects: b.Subjects, RoleRef: &b.RoleRef})
	}
	for _, r := range Roles() {
		add(referenceObject{Kind: "Role", Namespace: r.Namespace, Name: r.Name, Labels: r.Labels, Annotations: r.Annotations, Rules: r.Rules})
	}
	for _, b := range RoleBindings() {
		add(referenceObject{Kind: "RoleBinding", Namespace: b.Namespace, Name: b.Name, Labels: b.Labels, Annotations: b.Annotations, Subjects: b.Subjects, RoleRef: &b.RoleRef})
	}
	return out
}

// TestBootstrapPolicyMatchesReference holds every bootstrap ClusterRole,
// ClusterRoleBinding, Role and RoleBinding to the ones a real
// kube-apiserver v1.37.2 creates: the same objects, labels, annotations,
// rules (in the same order), aggregation rules, subjects and role refs. The
// rules of aggregated roles are not compared: the reference has none
// without kube-controller-manager, whose aggregation controller kapi runs
// in-process.
func TestBootstrapPolicyMatchesReference(t *testing.T) {
	want, got := readReferencePolicy(t), kapiPolicy(t)
	for _, k := range slices.Sorted(maps.Keys(want)) {
		w := want[k]
		g, ok := got[k]
		if !ok {
			t.Errorf("missing bootstrap object %s", k)
			continue
		}
		if w.AggregationRule != nil {
			w.Rules, g.Rules = nil, nil
		}
		if diff := cmp.Diff(w, g, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s differs from kube-apiserver v1.37.2's (-reference +kapi):\n%s", k, diff)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("bootstrap object %s is not created by kube-apiserver v1.37.2", k)
		}
	}
}

// TestBootstrapObjectsWellFormed checks what every bootstrap object shares
// in upstream's golden files: the bootstrapping label, the autoupdate
// annotation, bindings that refer to a bootstrap role of the right kind,
// and controller bindings to the controller's own service account.
func TestBootstrapObjectsWellFormed(t *testing.T) {
	meta := func(kind, name string, labels, annotations map[string]string) {
		if labels[BootstrapLabelKey] != BootstrapLabelValue || annotations[AutoUpdateAnnotationKey] != "true" {
			t.Errorf("%s %s: labels %v annotations %v", kind, name, labels, annotations)
		}
	}
	clusterRoles := map[string]bool{}
	for _, r := range ClusterRoles() {
		meta("ClusterRole", r.Name, r.Labels, r.Annotations)
		clusterRoles[r.Name] = true
		if len(r.Rules) == 0 && r.AggregationRule == nil {
			t.Errorf("ClusterRole %s has no rules", r.Name)
		}
		for _, rule := range r.Rules {
			if len(rule.Verbs) == 0 || (len(rule.Resources) == 0) == (len(rule.NonResourceURLs) == 0) {
				t.Errorf("ClusterRole %s: malformed rule %+v", r.Name, rule)
			}
		}
	}
	for _, b := range ClusterRoleBindings() {
		meta("ClusterRoleBinding", b.Name, b.Labels, b.Annotations)
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.APIGroup != rbacv1.GroupName || !clusterRoles[b.RoleRef.Name] {
			t.Errorf("ClusterRoleBinding %s: roleRef %+v", b.Name, b.RoleRef)
		}
		if controller, ok := strings.CutPrefix(b.Name, controllerRolePrefix); ok {
			want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: controller}}
			if b.RoleRef.Name != b.Name || !slices.Equal(b.Subjects, want) {
				t.Errorf("ClusterRoleBinding %s: roleRef %q subjects %+v, want its own role and %+v", b.Name, b.RoleRef.Name, b.Subjects, want)
			}
		}
	}
	roles := map[string]bool{}
	for _, r := range Roles() {
		meta("Role", r.Namespace+"/"+r.Name, r.Labels, r.Annotations)
		roles[r.Namespace+"/"+r.Name] = true
	}
	for _, b := range RoleBindings() {
		meta("RoleBinding", b.Namespace+"/"+b.Name, b.Labels, b.Annotations)
		if b.RoleRef.Kind != "Role" || !roles[b.Namespace+"/"+b.RoleRef.Name] {
			t.Errorf("RoleBinding %s/%s: roleRef %+v", b.Namespace, b.Name, b.RoleRef)
		}
	}
}

// The names computed once are the policy's, in its order.
func TestPolicyNames(t *testing.T) {
	var roles, bindings []string
	for _, r := range ClusterRoles() {
		roles = append(roles, r.Name)
	}
	for _, b := range ClusterRoleBindings() {
		bindings = append(bindings, b.Name)
	}
	if got := ClusterRoleNames(); !slices.Equal(got, roles) {
		t.Errorf("ClusterRoleNames() = %v, want %v", got, roles)
	}
	if got := ClusterRoleBindingNames(); !slices.Equal(got, bindings) {
		t.Errorf("ClusterRoleBindingNames() = %v, want %v", got, bindings)
	}
	ClusterRoleNames()[0] = "changed" // a copy: the next call is unchanged
	if got := ClusterRoleNames(); got[0] != roles[0] {
		t.Errorf("ClusterRoleNames()[0] = %q after a caller changed its copy", got[0])
	}
}
