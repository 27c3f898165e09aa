package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// mutatingPolicyManifest is a MutatingAdmissionPolicy with an
// ApplyConfiguration and a JSONPatch mutation (in the style of the
// examples of
// https://kubernetes.io/docs/reference/access-authn-authz/mutating-admission-policy/)
// and its binding, limited to one namespace (the shared server runs other
// tests). NAME is replaced per run.
const mutatingPolicyManifest = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: NAME
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["configmaps", "pods"]
  matchConditions:
  - name: not-opted-out
    expression: "!has(object.metadata.labels) || !('opt-out' in object.metadata.labels)"
  variables:
  - name: team
    expression: "has(object.metadata.labels) && 'team' in object.metadata.labels ? object.metadata.labels['team'] : 'none'"
  failurePolicy: Fail
  reinvocationPolicy: IfNeeded
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{
          metadata: Object.metadata{
            labels: {"owner": variables.team, "mutated-by": "NAME"}
          }
        }
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        [
          JSONPatch{
            op: "add",
            path: "/metadata/annotations",
            value: {"example.com/operation": request.operation}
          }
        ]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: NAME
spec:
  policyName: NAME
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: NAMESPACE
`

// TestKubectlMutatingAdmissionPolicy: kubectl 1.33 (and 1.27) apply a
// MutatingAdmissionPolicy and its binding, read them back as upstream's
// printers show them (NAME MUTATIONS PARAMKIND AGE, NAME POLICYNAME
// PARAMREF AGE), and a configmap and a pod created with kubectl come out
// mutated; an invalid policy is refused with upstream's field error; a
// watch sees the policy's events.
func TestKubectlMutatingAdmissionPolicy(t *testing.T) {
	binaries := kubectlPair(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bin := range binaries {
			t.Run(filepath.Base(bin), func(t *testing.T) {
				runMutatingPolicyFlow(t, e, newKC(t, e, bin), "map-"+strings.ReplaceAll(strings.TrimPrefix(filepath.Base(bin), "kubectl."), ".", "-"))
			})
		}
	})
}

func runMutatingPolicyFlow(t *testing.T, e *env, k *kc, name string) {
	ctx := context.Background()
	ns := e.newNamespace(t)
	ar := e.cs.AdmissionregistrationV1()

	w, err := ar.MutatingAdmissionPolicies().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	manifest := strings.NewReplacer("NAMESPACE", ns, "NAME", name).Replace(mutatingPolicyManifest)
	out := k.apply(t, ns, manifest)
	for _, want := range []string{
		"mutatingadmissionpolicy.admissionregistration.k8s.io/" + name + " created",
		"mutatingadmissionpolicybinding.admissionregistration.k8s.io/" + name + " created",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output %q, want %q", out, want)
		}
	}
	t.Cleanup(func() {
		k.run(t, "", nil, "delete", "mutatingadmissionpolicybinding", name)
		k.run(t, "", nil, "delete", "mutatingadmissionpolicy", name)
	})
	select {
	case ev := <-w.ResultChan():
		if p, ok := ev.Object.(*arv1.MutatingAdmissionPolicy); ev.Type != watch.Added || !ok || p.Name != name || *p.Spec.FailurePolicy != arv1.Fail {
			t.Errorf("watch event %s %#v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Error("no watch event for the policy")
	}

	// Tables as upstream's printers.
	tableLine(t, k.ok(t, "get", "mutatingadmissionpolicies", name), `NAME\s+MUTATIONS\s+PARAMKIND\s+AGE`)
	tableLine(t, k.ok(t, "get", "mutatingadmissionpolicies", name), name+`\s+2\s+<unset>\s+\S+`)
	tableLine(t, k.ok(t, "get", "mutatingadmissionpolicybindings", name), `NAME\s+POLICYNAME\s+PARAMREF\s+AGE`)
	tableLine(t, k.ok(t, "get", "mutatingadmissionpolicybindings", name), name+`\s+`+name+`\s+<unset>\s+\S+`)
	// Defaults stored (matchPolicy, selectors, scope).
	p, err := ar.MutatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mc := p.Spec.MatchConstraints; *mc.MatchPolicy != arv1.Equivalent || mc.ObjectSelector == nil || *mc.ResourceRules[0].Scope != arv1.AllScopes {
		t.Errorf("stored match constraints %+v", mc)
	}
	// OpenAPI.
	if out := k.ok(t, "explain", "mutatingadmissionpolicy.spec.mutations"); !strings.Contains(out, "patchType") {
		t.Errorf("explain: %s", out)
	}

	// A configmap applied with kubectl is mutated (once the plugin has
	// seen the policy).
	cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %%s\n  labels: {team: blue}\ndata: {a: b}\n")
	eventually(t, 15*time.Second, "the policy mutates configmaps", func() error {
		r := k.run(t, fmt.Sprintf(cm, "probe"), nil, "-n", ns, "create", "--dry-run=server", "-o", "jsonpath={.metadata.labels.owner}", "-f", "-")
		if r.code != 0 || r.stdout != "blue" {
			return fmt.Errorf("dry run: %s", r)
		}
		return nil
	})
	k.apply(t, ns, fmt.Sprintf(cm, "settings"))
	got := k.configMap(t, ns, "settings")
	if got.Labels["owner"] != "blue" || got.Labels["mutated-by"] != name || got.Annotations["example.com/operation"] != "CREATE" {
		t.Errorf("configmap labels %v annotations %v", got.Labels, got.Annotations)
	}
	// Opted out: untouched.
	k.apply(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  labels: {opt-out: \"yes\"}\n")
	if got := k.configMap(t, ns, "plain"); got.Labels["mutated-by"] != "" {
		t.Errorf("opted-out configmap mutated: %v", got.Labels)
	}

	// A pod (the namespace's default service account may come a moment
	// later).
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx\n"
	eventually(t, 30*time.Second, "the pod is created", func() error {
		if r := k.run(t, pod, nil, "-n", ns, "apply", "-f", "-"); r.code != 0 {
			return fmt.Errorf("%s", r)
		}
		return nil
	})
	po, err := e.cs.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if po.Labels["owner"] != "none" || po.Labels["mutated-by"] != name || po.Annotations["example.com/operation"] == "" {
		t.Errorf("pod labels %v annotations %v", po.Labels, po.Annotations)
	}

	// Validation errors as kubectl shows them.
	bad := strings.NewReplacer("NAME", name+"-bad", "reinvocationPolicy: IfNeeded", "reinvocationPolicy: Always", "NAMESPACE", ns).Replace(mutatingPolicyManifest)
	bad = bad[:strings.Index(bad, "---")]
	r := k.run(t, bad, nil, "apply", "-f", "-")
	want := `spec.reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"` // sorted: kube-apiserver v1.37.2's answer
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("invalid policy: %s, want %q", r, want)
	}
	list, err := ar.MutatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	if err != nil || !slices.ContainsFunc(list.Items, func(p arv1.MutatingAdmissionPolicy) bool { return p.Name == name }) {
		t.Errorf("list: %v", err)
	}
}
