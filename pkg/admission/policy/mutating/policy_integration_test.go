package mutating_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

func rules(resources ...string) *arv1.MatchResources {
	return &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
		Operations: []arv1.OperationType{arv1.Create, arv1.Update},
		Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources},
	}}}}
}

func applyMutation(expr string) arv1.Mutation {
	return arv1.Mutation{PatchType: arv1.PatchTypeApplyConfiguration, ApplyConfiguration: &arv1.ApplyConfiguration{Expression: expr}}
}

func jsonPatchMutation(expr string) arv1.Mutation {
	return arv1.Mutation{PatchType: arv1.PatchTypeJSONPatch, JSONPatch: &arv1.JSONPatch{Expression: expr}}
}

// policy returns a policy on configmaps of objects labelled
// test=<name>, and its binding (named as the policy).
func policy(name string, fp arv1.FailurePolicyType, ms ...arv1.Mutation) (*arv1.MutatingAdmissionPolicy, *arv1.MutatingAdmissionPolicyBinding) {
	return &arv1.MutatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: arv1.MutatingAdmissionPolicySpec{
				FailurePolicy:      ptr.To(fp),
				MatchConstraints:   rules("configmaps"),
				Mutations:          ms,
				ReinvocationPolicy: arv1.NeverReinvocationPolicy,
			},
		}, &arv1.MutatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: arv1.MutatingAdmissionPolicyBindingSpec{
				PolicyName:     name,
				MatchResources: &arv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"test": name}}},
			},
		}
}

func annotated(cm *corev1.ConfigMap) *corev1.ConfigMap {
	cm.Annotations = map[string]string{"keep": "me"}
	return cm
}

// denied: a mutation error of a policy with failurePolicy Fail, as
// upstream's policy dispatcher answers it: 403, reason Invalid, the
// message as the one cause.
func denied(err error) bool {
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		return false
	}
	s := st.Status()
	return s.Code == 403 && s.Reason == metav1.StatusReasonInvalid && s.Details != nil && len(s.Details.Causes) == 1 && s.Details.Causes[0].Message == s.Message
}

type env struct {
	ctx context.Context
	cs  kubernetes.Interface
}

// install creates a policy and its binding and waits until the plugin
// applies it: probe creates (dry run) until ready reports the effect.
func (e env) install(t *testing.T, p *arv1.MutatingAdmissionPolicy, b *arv1.MutatingAdmissionPolicyBinding, probe func() bool) {
	t.Helper()
	ar := e.cs.AdmissionregistrationV1()
	if _, err := ar.MutatingAdmissionPolicies().Create(e.ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.MutatingAdmissionPolicyBindings().Create(e.ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !probe() {
		if time.Now().After(deadline) {
			t.Fatalf("policy %s not in effect", p.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dryCM creates a configmap in dry run.
func (e env) dryCM(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	return e.cs.CoreV1().ConfigMaps("default").Create(e.ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
}

func cmWith(name string, labels, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: data}
}

// TestMutatingAdmissionPolicy runs MutatingAdmissionPolicies through a
// real server: ApplyConfiguration (merged as server-side apply merges:
// labels added, a list-map item merged by key, atomic fields refused) and
// JSONPatch mutations, params, matchConditions, variables, failurePolicy
// Fail and Ignore with upstream's message
// (k8s.io/apiserver pkg/admission/plugin/policy/generic
// policy_dispatcher.go v1.37: 403, "policy '<p>' with binding '<b>'
// denied request: <error>", reason Invalid for evaluation errors),
// reinvocation, and the mutated object seen by a
// ValidatingAdmissionPolicy.
func TestMutatingAdmissionPolicy(t *testing.T) {
	s := kapitest.Start(t, kapitest.WithFlags("--disable-admission-plugins=ServiceAccount"))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	e := env{ctx, cs}
	cms := cs.CoreV1().ConfigMaps("default")

	t.Run("apply configuration with match condition and variable", func(t *testing.T) {
		p, b := policy("labels", arv1.Fail, applyMutation(
			`Object{metadata: Object.metadata{labels: {"mutated": "true", "keys": string(variables.keys)}}}`))
		p.Spec.Variables = []arv1.Variable{{Name: "keys", Expression: "has(object.data) ? object.data.size() : 0"}}
		p.Spec.MatchConditions = []arv1.MatchCondition{{Name: "not-skipped", Expression: "object.metadata.name != 'skip'"}}
		lbl := map[string]string{"test": "labels"}
		e.install(t, p, b, func() bool {
			got, err := e.dryCM(cmWith("probe", lbl, nil))
			return err == nil && got.Labels["mutated"] == "true"
		})
		got, err := cms.Create(ctx, cmWith("a", lbl, map[string]string{"x": "1", "y": "2"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"test": "labels", "mutated": "true", "keys": "2"}; fmt.Sprint(got.Labels) != fmt.Sprint(want) {
			t.Errorf("labels %v, want %v", got.Labels, want)
		}
		stored, _ := cms.Get(ctx, "a", metav1.GetOptions{})
		if stored.Labels["mutated"] != "true" {
			t.Errorf("stored labels %v", stored.Labels)
		}
		// An update is mutated too (the variable sees the new data).
		stored.Data["z"] = "3"
		upd, err := cms.Update(ctx, stored, metav1.UpdateOptions{})
		if err != nil || upd.Labels["keys"] != "3" {
			t.Errorf("update: %v labels %v", err, upd.Labels)
		}
		skipped, err := cms.Create(ctx, cmWith("skip", lbl, nil), metav1.CreateOptions{})
		if err != nil || skipped.Labels["mutated"] != "" {
			t.Errorf("match condition false: %v labels %v", err, skipped.Labels)
		}
		other, err := cms.Create(ctx, cmWith("unbound", nil, nil), metav1.CreateOptions{})
		if err != nil || len(other.Labels) != 0 {
			t.Errorf("unbound configmap: %v labels %v", err, other.Labels)
		}
	})

	t.Run("json patch with params", func(t *testing.T) {
		if _, err := cms.Create(ctx, cmWith("defaults", nil, map[string]string{"value": "from-param"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p, b := policy("patch", arv1.Fail, jsonPatchMutation(
			`[JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/from-param"), value: params.data.value},
			  JSONPatch{op: "test", path: "/data/old", value: "old"},
			  JSONPatch{op: "replace", path: "/data/old", value: "new"}]`))
		p.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		b.Spec.ParamRef = &arv1.ParamRef{Name: "defaults", ParameterNotFoundAction: ptr.To(arv1.DenyAction)}
		lbl := map[string]string{"test": "patch"}
		e.install(t, p, b, func() bool {
			got, err := e.dryCM(annotated(cmWith("probe", lbl, map[string]string{"old": "old"})))
			return err == nil && got.Annotations["example.com/from-param"] == "from-param"
		})
		got, err := cms.Create(ctx, annotated(cmWith("patched", lbl, map[string]string{"old": "old"})), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Annotations["example.com/from-param"] != "from-param" || got.Data["old"] != "new" {
			t.Errorf("annotations %v data %v", got.Annotations, got.Data)
		}
		// A failing patch (a failed test operation) refuses the request
		// with upstream's message, 403, reason Invalid.
		_, err = cms.Create(ctx, annotated(cmWith("nokey", lbl, map[string]string{"other": "x"})), metav1.CreateOptions{})
		if !denied(err) || !strings.HasPrefix(err.Error(), "policy 'patch' with binding 'patch' denied request: JSONPatch: ") {
			t.Fatalf("failing patch: %v, want 403 Invalid policy 'patch' with binding 'patch' denied request: JSONPatch: ...", err)
		}
		// The param in another namespace is not found: Deny.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = cs.CoreV1().ConfigMaps("elsewhere").Create(ctx, annotated(cmWith("c", lbl, map[string]string{"old": "old"})), metav1.CreateOptions{})
		want := "policy 'patch' with binding 'patch' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("param not found: %v, want 403 %q", err, want)
		}
	})

	t.Run("failure policy", func(t *testing.T) {
		expr := `Object{metadata: Object.metadata{labels: {"n": object.data.missing}}}`
		p, b := policy("fail", arv1.Fail, applyMutation(expr))
		lbl := map[string]string{"test": "fail"}
		e.install(t, p, b, func() bool { _, err := e.dryCM(cmWith("probe", lbl, nil)); return err != nil })
		_, err := cms.Create(ctx, cmWith("f", lbl, map[string]string{"x": "1"}), metav1.CreateOptions{})
		want := "policy 'fail' with binding 'fail' denied request: expression '" + expr + "' resulted in error: no such key: missing"
		if !denied(err) || err.Error() != want {
			t.Errorf("Fail: %v, want 403 Invalid %q", err, want)
		}
		p, b = policy("ignore", arv1.Ignore, applyMutation(expr), applyMutation(`Object{metadata: Object.metadata{labels: {"second": "ran"}}}`))
		lbl = map[string]string{"test": "ignore"}
		e.install(t, p, b, func() bool {
			got, err := e.dryCM(cmWith("probe", lbl, nil))
			return err == nil && got.Labels["second"] == "ran"
		})
		got, err := cms.Create(ctx, cmWith("i", lbl, nil), metav1.CreateOptions{})
		if err != nil || got.Labels["n"] != "" || got.Labels["second"] != "ran" {
			t.Errorf("Ignore: %v labels %v, want created with the second mutation applied", err, got.Labels)
		}
	})

	t.Run("reinvocation", func(t *testing.T) {
		// "a-copy" (IfNeeded) runs first, "b-set" then sets the label it
		// copies: a-copy is invoked again and sees it.
		copyExpr := `Object{metadata: Object.metadata{labels: {"copy": ('src' in object.metadata.labels) ? object.metadata.labels['src'] : 'none'}}}`
		for _, reinvoke := range []arv1.ReinvocationPolicyType{arv1.IfNeededReinvocationPolicy, arv1.NeverReinvocationPolicy} {
			name := "a-copy-" + strings.ToLower(string(reinvoke))
			lbl := map[string]string{"test": name}
			p, b := policy(name, arv1.Fail, applyMutation(copyExpr))
			p.Spec.ReinvocationPolicy = reinvoke
			e.install(t, p, b, func() bool {
				got, err := e.dryCM(cmWith("probe", lbl, nil))
				return err == nil && got.Labels["copy"] == "none"
			})
			p2, b2 := policy("b-set-"+strings.ToLower(string(reinvoke)), arv1.Fail, applyMutation(`Object{metadata: Object.metadata{labels: {"src": "set"}}}`))
			b2.Spec.MatchResources.ObjectSelector.MatchLabels = lbl
			e.install(t, p2, b2, func() bool {
				got, err := e.dryCM(cmWith("probe", lbl, nil))
				return err == nil && got.Labels["src"] == "set"
			})
			got, err := cms.Create(ctx, cmWith("r-"+strings.ToLower(string(reinvoke)), lbl, nil), metav1.CreateOptions{})
			want := map[arv1.ReinvocationPolicyType]string{arv1.IfNeededReinvocationPolicy: "set", arv1.NeverReinvocationPolicy: "none"}[reinvoke]
			if err != nil || got.Labels["copy"] != want {
				t.Errorf("%s: %v labels %v, want copy=%s", reinvoke, err, got.Labels, want)
			}
		}
	})

	t.Run("pod: list merged by key, atomic map refused, then validated", func(t *testing.T) {
		pods := cs.CoreV1().Pods("default")
		pod := func(name string) *corev1.Pod {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"test": "pods"}}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: "busybox"}, {Name: "side", Image: "busybox"}},
			}}
		}
		p, b := policy("pods", arv1.Fail, applyMutation(
			`Object{spec: Object.spec{containers: [Object.spec.containers{name: "side", imagePullPolicy: "Never"}]}}`))
		p.Spec.MatchConstraints = rules("pods")
		b.Spec.MatchResources.ObjectSelector.MatchLabels = map[string]string{"test": "pods"}
		e.install(t, p, b, func() bool {
			got, err := pods.Create(ctx, pod("probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err == nil && len(got.Spec.Containers) == 2 && got.Spec.Containers[1].ImagePullPolicy == corev1.PullNever
		})
		got, err := pods.Create(ctx, pod("merged"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The item keyed "side" is merged, "app" kept and defaulted.
		if c := got.Spec.Containers; len(c) != 2 || c[0].Name != "app" || c[0].ImagePullPolicy != corev1.PullAlways || c[1].ImagePullPolicy != corev1.PullNever {
			t.Errorf("containers %+v", got.Spec.Containers)
		}

		p, b = policy("atomic", arv1.Fail, applyMutation(`Object{spec: Object.spec{nodeSelector: {"disk": "ssd"}}}`))
		p.Spec.MatchConstraints = rules("pods")
		lbl := map[string]string{"test": "atomic"}
		b.Spec.MatchResources.ObjectSelector.MatchLabels = lbl
		atomicPod := pod("atomic")
		atomicPod.Labels = lbl
		e.install(t, p, b, func() bool {
			_, err := pods.Create(ctx, atomicPod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err != nil
		})
		_, err = pods.Create(ctx, atomicPod, metav1.CreateOptions{})
		want := "policy 'atomic' with binding 'atomic' denied request: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: spec.nodeSelector"
		if !denied(err) || err.Error() != want {
			t.Errorf("atomic: %v, want 403 Invalid %q", err, want)
		}
	})

	t.Run("validating policy sees the mutated object", func(t *testing.T) {
		ar := cs.AdmissionregistrationV1()
		vap := &arv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "needs-mutation"},
			Spec: arv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: rules("configmaps"),
				Validations:      []arv1.Validation{{Expression: "object.metadata.labels['mutated'] == 'true'"}},
			},
		}
		if _, err := ar.ValidatingAdmissionPolicies().Create(ctx, vap, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx, &arv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "needs-mutation"},
			Spec: arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "needs-mutation", ValidationActions: []arv1.ValidationAction{arv1.Deny},
				MatchResources: &arv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"test": "labels"}}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The "labels" policy labels these: the VAP admits them.
		deadline := time.Now().Add(15 * time.Second)
		for {
			// "skip" is not mutated (match condition): denied once the
			// VAP is in effect.
			_, err := e.dryCM(cmWith("skip", map[string]string{"test": "labels"}, nil))
			if err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("validating policy not in effect")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := cms.Create(ctx, cmWith("checked", map[string]string{"test": "labels"}, nil), metav1.CreateOptions{}); err != nil {
			t.Errorf("mutated configmap denied: %v", err)
		}
	})
}

// TestMutatingPolicyAuthorizer: the authorizer variables in a mutation
// check the request's user against the server's authorizer (RBAC), as in
// validating policies: a user who may delete configmaps gets label
// may-delete=true, one who may only create gets false.
func TestMutatingPolicyAuthorizer(t *testing.T) {
	s := kapitest.Start(t, kapitest.WithFlags("--disable-admission-plugins=ServiceAccount"))
	admin := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	e := env{ctx, admin}
	p, b := policy("authz", arv1.Fail, applyMutation(
		`Object{metadata: Object.metadata{labels: {"may-delete": string(authorizer.group('').resource('configmaps').namespace(object.metadata.namespace).check('delete').allowed()), "request-delete": string(authorizer.requestResource.check('delete').allowed())}}}`))
	lbl := map[string]string{"test": "authz"}
	e.install(t, p, b, func() bool {
		got, err := e.dryCM(cmWith("probe", lbl, nil))
		return err == nil && got.Labels["may-delete"] != ""
	})
	creator, err := s.AddUser(kapitest.User{Name: "creator", Groups: []string{"creators"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-creator"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-creator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cm-creator"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "creators"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who  string
		cs   kubernetes.Interface
		want string
	}{{"admin", admin, "true"}, {"creator", kubernetes.NewForConfigOrDie(creator), "false"}} {
		var got *corev1.ConfigMap
		deadline := time.Now().Add(15 * time.Second)
		for {
			got, err = tc.cs.CoreV1().ConfigMaps("default").Create(ctx, cmWith("by-"+tc.who, lbl, nil), metav1.CreateOptions{})
			// The creator's RoleBinding may take a moment to be seen.
			if err == nil || !apierrors.IsForbidden(err) || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("%s: create: %v", tc.who, err)
		}
		if got.Labels["may-delete"] != tc.want || got.Labels["request-delete"] != tc.want {
			t.Errorf("%s: labels %v, want may-delete and request-delete %s", tc.who, got.Labels, tc.want)
		}
	}
}
