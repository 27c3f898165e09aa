package validating_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	testwait.Until(t, 15*time.Second, 50*time.Millisecond, what, check)
}

// configMapPolicy limits the number of keys of configmaps labelled
// limited=true to params.data.maxKeys (a ConfigMap param).
func configMapPolicy() *arv1.ValidatingAdmissionPolicy {
	return &arv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "max-keys"},
		Spec: arv1.ValidatingAdmissionPolicySpec{
			ParamKind: &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create, arv1.Update},
				Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}}}},
			Variables: []arv1.Variable{{Name: "keys", Expression: "has(object.data) ? object.data.size() : 0"}},
			Validations: []arv1.Validation{
				{Expression: "variables.keys <= int(params.data.maxKeys)", MessageExpression: "'too many keys: ' + string(variables.keys) + ' > ' + params.data.maxKeys"},
				{Expression: "!object.metadata.name.startsWith('bad')", Reason: ptr.To(metav1.StatusReasonForbidden)},
			},
			AuditAnnotations: []arv1.AuditAnnotation{{Key: "keys", ValueExpression: "string(variables.keys)"}},
		},
	}
}

func binding(name string, actions []arv1.ValidationAction, selector map[string]string) *arv1.ValidatingAdmissionPolicyBinding {
	return &arv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "max-keys",
			ParamRef:          &arv1.ParamRef{Name: "limits", Namespace: "default", ParameterNotFoundAction: ptr.To(arv1.DenyAction)},
			ValidationActions: actions,
			MatchResources: &arv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: selector},
			},
		},
	}
}

func cm(name string, labels map[string]string, keys int) *corev1.ConfigMap {
	data := map[string]string{}
	for i := range keys {
		data[string(rune('a'+i))] = "v"
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: data}
}

// TestValidatingAdmissionPolicy: a policy with ConfigMap params, Deny and
// Warn bindings, upstream's denial message and codes
// (k8s.io/apiserver pkg/admission/plugin/policy/validating/dispatcher.go
// v1.37: "ValidatingAdmissionPolicy '<policy>' with binding '<binding>'
// denied request: <message>", code from the validation's reason,
// default Invalid 422), the Warn action shown by kubectl 1.33, and a type
// error in the policy's status.
func TestValidatingAdmissionPolicy(t *testing.T) {
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	s := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) { o.AuditLogPath = auditLog }), kapitest.WithFlags("--audit-policy-file="+testaudit.MetadataPolicy(t)))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	ar := cs.AdmissionregistrationV1()
	if _, err := ar.ValidatingAdmissionPolicies().Create(ctx, configMapPolicy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx, binding("deny-limited", []arv1.ValidationAction{arv1.Deny, arv1.Audit}, map[string]string{"limited": "true"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx, binding("warn-watched", []arv1.ValidationAction{arv1.Warn}, map[string]string{"watched": "true"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("default")
	limited := map[string]string{"limited": "true"}

	// No param yet: parameterNotFoundAction Deny.
	var err error
	eventually(t, "policy in effect", func() bool {
		_, err = cms.Create(ctx, cm("first", limited, 1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil
	})
	if want := "ValidatingAdmissionPolicy 'max-keys' with binding 'deny-limited' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"; !strings.Contains(err.Error(), want) {
		t.Errorf("without params: %v, want %q", err, want)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Data: map[string]string{"maxKeys": "2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, cm("small", limited, 2), metav1.CreateOptions{}); err != nil {
		t.Errorf("2 keys with maxKeys 2: %v", err)
	}
	_, err = cms.Create(ctx, cm("big", limited, 3), metav1.CreateOptions{})
	want := `configmaps "big" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'deny-limited' denied request: too many keys: 3 > 2`
	if err == nil || err.Error() != want || !apierrors.IsInvalid(err) {
		t.Errorf("3 keys: %v, want 422 %q", err, want)
	}
	_, err = cms.Create(ctx, cm("bad-name", limited, 1), metav1.CreateOptions{})
	want = `configmaps "bad-name" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'deny-limited' denied request: failed expression: !object.metadata.name.startsWith('bad')`
	if err == nil || err.Error() != want || !apierrors.IsForbidden(err) {
		t.Errorf("bad name: %v, want 403 %q", err, want)
	}
	// Audit: the failure of the Deny+Audit binding and the policy's audit
	// annotation, as upstream names them.
	eventually(t, "audit annotations", func() bool {
		b, _ := os.ReadFile(auditLog)
		return strings.Contains(string(b), `"max-keys/keys":"2"`) &&
			strings.Contains(string(b), `"validation.policy.admission.k8s.io/validation_failure":"[{\"binding\":\"deny-limited\",\"expressionIndex\":0,\"message\":\"too many keys: 3 \\u003e 2\",\"policy\":\"max-keys\",\"validationActions\":[\"Deny\",\"Audit\"]}]"`)
	})
	// Unlabelled configmaps are not bound.
	if _, err := cms.Create(ctx, cm("free", nil, 5), metav1.CreateOptions{}); err != nil {
		t.Errorf("unbound configmap: %v", err)
	}
	// An update is checked too; the param changed is in effect at once.
	if _, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Data: map[string]string{"maxKeys": "5"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, cm("big", limited, 3), metav1.CreateOptions{}); err != nil {
		t.Errorf("3 keys with maxKeys 5: %v", err)
	}

	// Warn: kubectl 1.33 prints the warning, the object is created.
	kubectl := "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"
	if _, err := os.Stat(kubectl); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kubectl 1.33 missing: %v", err)
		}
		t.Logf("kubectl 1.33 not found at %s: Warn action via kubectl not checked", kubectl)
	} else {
		manifest := `apiVersion: v1
kind: ConfigMap
metadata:
  name: watched
  labels: {watched: "true"}
data: {a: "1", b: "2", c: "3", d: "4", e: "5", f: "6"}
`
		cmd := exec.Command(kubectl, "--kubeconfig", s.Kubeconfig, "create", "-f", "-")
		cmd.Stdin = strings.NewReader(manifest)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl create: %v\n%s", err, stderr.String())
		}
		wantWarn := "Warning: Validation failed for ValidatingAdmissionPolicy 'max-keys' with binding 'warn-watched': too many keys: 6 > 5"
		if !strings.Contains(stderr.String(), wantWarn) || !strings.Contains(stdout.String(), "configmap/watched created") {
			t.Errorf("kubectl stdout %q stderr %q, want warning %q", stdout.String(), stderr.String(), wantWarn)
		}
	}

	// A type error: configmaps' data is a map of strings.
	typed := configMapPolicy()
	typed.Name = "typed"
	typed.Spec.ParamKind = nil
	typed.Spec.Variables = nil
	typed.Spec.AuditAnnotations = nil
	typed.Spec.Validations = []arv1.Validation{{Expression: "object.data.size() < 10"}, {Expression: "object.data['x'] > 5"}, {Expression: "object.immutable == 'yes'"}}
	if _, err := ar.ValidatingAdmissionPolicies().Create(ctx, typed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *arv1.ValidatingAdmissionPolicy
	eventually(t, "type checking status", func() bool {
		got, err = ar.ValidatingAdmissionPolicies().Get(ctx, "typed", metav1.GetOptions{})
		return err == nil && got.Status.TypeChecking != nil && got.Status.ObservedGeneration == got.Generation
	})
	// Written as upstream's status controller writes it
	// (pkg/controller/validatingadmissionpolicystatus/controller.go
	// v1.37): a forced apply of observedGeneration and typeChecking, by
	// its field manager, on the status subresource; no conditions.
	var applied bool
	for _, mf := range got.ManagedFields {
		if mf.Manager == "validatingadmissionpolicy-status-controller" && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "status" {
			applied = true
		}
	}
	if !applied || len(got.Status.Conditions) != 0 {
		t.Errorf("status managed fields %+v, conditions %v: want an Apply by validatingadmissionpolicy-status-controller on status, no conditions", got.ManagedFields, got.Status.Conditions)
	}
	w := got.Status.TypeChecking.ExpressionWarnings
	if len(w) != 2 || w[0].FieldRef != "spec.validations[1].expression" || w[1].FieldRef != "spec.validations[2].expression" ||
		!strings.Contains(w[0].Warning, "/v1, Kind=ConfigMap: ERROR: <input>:1:18: found no matching overload for '_>_' applied to '(string, int)'") ||
		!strings.Contains(w[1].Warning, "found no matching overload for '_==_' applied to '(bool, string)'") {
		t.Errorf("type checking warnings %+v", w)
	}
	// A new generation is checked again: the warnings are replaced.
	got.Spec.Validations = got.Spec.Validations[:2]
	if _, err := ar.ValidatingAdmissionPolicies().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "type checking of generation 2", func() bool {
		got, err = ar.ValidatingAdmissionPolicies().Get(ctx, "typed", metav1.GetOptions{})
		return err == nil && got.Generation == 2 && got.Status.ObservedGeneration == 2
	})
	if w := got.Status.TypeChecking.ExpressionWarnings; len(w) != 1 || w[0].FieldRef != "spec.validations[1].expression" {
		t.Errorf("type checking warnings of generation 2: %+v", w)
	}
}
