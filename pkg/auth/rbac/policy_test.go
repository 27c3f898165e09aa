package rbac

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// readBootstrapNames reads testdata/bootstrap-names.txt: the golden names
// of upstream's bootstrap objects, as "Kind | namespace | name".
func readBootstrapNames(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("testdata/bootstrap-names.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "|")
		if len(fields) != 3 {
			t.Fatalf("bad line %q", line)
		}
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		out = append(out, strings.Join(fields, " "))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestBootstrapObjectNamesMatchUpstream(t *testing.T) {
	var got []string
	for _, r := range ClusterRoles() {
		got = append(got, "ClusterRole - "+r.Name)
	}
	for _, b := range ClusterRoleBindings() {
		got = append(got, "ClusterRoleBinding - "+b.Name)
	}
	for _, r := range Roles() {
		got = append(got, "Role "+r.Namespace+" "+r.Name)
	}
	for _, b := range RoleBindings() {
		got = append(got, "RoleBinding "+b.Namespace+" "+b.Name)
	}
	slices.Sort(got)
	want := readBootstrapNames(t)
	for _, w := range want {
		if _, found := slices.BinarySearch(got, w); !found {
			t.Errorf("missing bootstrap object %s", w)
		}
	}
	for i, g := range got {
		if i > 0 && got[i-1] == g {
			t.Errorf("duplicate bootstrap object %s", g)
		}
		if _, found := slices.BinarySearch(want, g); !found {
			t.Errorf("bootstrap object %s is not in upstream's golden files", g)
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
