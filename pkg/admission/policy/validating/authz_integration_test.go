package validating_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/kapitest"
)

// authzPolicy checks, for the configmap's creator, the authorizer
// library's every builder (upstream's k8s.io/apiserver
// pkg/cel/library/authz.go v1.37): a named secret, the request's own
// resource, a service account's rights, a non-resource path; and makes
// three checks in one expression, over the per-call cost limit (a check
// costs 350000 of 1000000, upstream's library/cost.go).
func authzPolicy() *arv1.ValidatingAdmissionPolicy {
	return &arv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "authz"},
		Spec: arv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create},
				Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}}}},
			MatchConditions: []arv1.MatchCondition{{Name: "labelled", Expression: "has(object.metadata.labels) && object.metadata.labels['authz'] == 'true'"}},
			Validations: []arv1.Validation{
				{
					Expression:        "!has(object.data.secret) || authorizer.group('').resource('secrets').namespace(object.metadata.namespace).name(object.data.secret).check('get').allowed()",
					MessageExpression: "'may not read secret ' + object.data.secret",
				},
				{
					Expression:        "authorizer.requestResource.check('delete').allowed()",
					MessageExpression: "'may not delete configmap ' + object.metadata.name",
				},
				{
					Expression:        "!has(object.data.sa) || authorizer.serviceAccount('default', object.data.sa).group('apps').resource('deployments').namespace('default').check('list').allowed()",
					MessageExpression: "'service account ' + object.data.sa + ' may not list deployments'",
				},
				{
					Expression:        "!has(object.data.path) || authorizer.path(object.data.path).check('get').allowed()",
					MessageExpression: "'may not get ' + object.data.path",
				},
				{
					Expression: "!has(object.data.costly) || authorizer.path('/a').check('get').allowed() || authorizer.path('/b').check('get').allowed() || authorizer.path('/c').check('get').allowed()",
				},
			},
			AuditAnnotations: []arv1.AuditAnnotation{
				{Key: "secret-reason", ValueExpression: "has(object.data.secret) ? authorizer.group('').resource('secrets').namespace(object.metadata.namespace).name(object.data.secret).check('get').reason() : ''"},
				{Key: "path-error", ValueExpression: "has(object.data.path) ? string(authorizer.path(object.data.path).check('get').errored()) + '/' + authorizer.path(object.data.path).check('get').error() + '/' : ''"},
			},
		},
	}
}

// TestAuthorizerInPolicy: the authorizer variables check the request's
// user (an RBAC identity) against the server's authorizer.
func TestAuthorizerInPolicy(t *testing.T) {
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	s := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) { o.AuditLogPath = auditLog }), kapitest.WithFlags("--audit-policy-file="+testaudit.MetadataPolicy(t)))
	admin := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	rbac := admin.RbacV1()
	mustDo(t, func() error {
		_, err := rbac.Roles("default").Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "writer"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"delete"}, ResourceNames: []string{"deletable"}},
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"open"}},
			},
		}, metav1.CreateOptions{})
		return err
	})
	mustDo(t, func() error {
		_, err := rbac.RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "writers"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "writer"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"}},
		}, metav1.CreateOptions{})
		return err
	})
	mustDo(t, func() error {
		_, err := rbac.Roles("default").Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "deployment-lister"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"list"}}},
		}, metav1.CreateOptions{})
		return err
	})
	mustDo(t, func() error {
		_, err := rbac.RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "robot"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployment-lister"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "robot", Namespace: "default"}},
		}, metav1.CreateOptions{})
		return err
	})
	ar := admin.AdmissionregistrationV1()
	mustDo(t, func() error {
		_, err := ar.ValidatingAdmissionPolicies().Create(ctx, authzPolicy(), metav1.CreateOptions{})
		return err
	})
	mustDo(t, func() error {
		_, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx, &arv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "authz"},
			Spec:       arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "authz", ValidationActions: []arv1.ValidationAction{arv1.Deny}},
		}, metav1.CreateOptions{})
		return err
	})

	aliceCfg, err := s.AddUser(kapitest.User{Name: "alice", Groups: []string{"devs"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := kubernetes.NewForConfigOrDie(aliceCfg).CoreV1().ConfigMaps("default")
	create := func(name string, data map[string]string) error {
		_, err := alice.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"authz": "true"}}, Data: data,
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	eventually(t, "policy in effect", func() bool { return create("other", map[string]string{"k": "v"}) != nil })

	prefix := `configmaps "%s" is forbidden: ValidatingAdmissionPolicy 'authz' with binding 'authz' denied request: `
	for _, c := range []struct {
		name string
		data map[string]string
		want string // "" allowed
	}{
		{"deletable", map[string]string{"secret": "open", "sa": "robot", "path": "/healthz"}, ""},
		{"other", map[string]string{"k": "v"}, "may not delete configmap other"},
		{"deletable", map[string]string{"secret": "closed"}, "may not read secret closed"},
		{"deletable", map[string]string{"sa": "stranger"}, "service account stranger may not list deployments"},
		{"deletable", map[string]string{"sa": "Not_A_Name"}, "expression '" + authzPolicy().Spec.Validations[2].Expression + "' resulted in error: Invalid service account name"},
		{"deletable", map[string]string{"path": "/metrics"}, "may not get /metrics"},
		{"deletable", map[string]string{"path": " "}, "expression '" + authzPolicy().Spec.Validations[3].Expression + "' resulted in error: path must not be empty"},
		{"deletable", map[string]string{"costly": "yes"}, "expression '" + authzPolicy().Spec.Validations[4].Expression + "' resulted in error: operation cancelled: actual cost limit exceeded"},
	} {
		err := create(c.name, c.data)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s %v: %v, want allowed", c.name, c.data, err)
			}
			continue
		}
		want := strings.Replace(prefix, "%s", c.name, 1) + c.want
		if err == nil || err.Error() != want || !apierrors.IsInvalid(err) {
			t.Errorf("%s %v: %v, want 422 %q", c.name, c.data, err, want)
		}
	}
	// The admin (system:masters) may do all of it: the checks are the
	// request's user's.
	if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{"authz": "true"}}, Data: map[string]string{"secret": "closed", "path": "/metrics"},
	}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("admin: %v", err)
	}
	// reason() is the authorizer's (kapi's RBAC), errored() and error()
	// tell no error.
	eventually(t, "audit annotations", func() bool {
		b, _ := os.ReadFile(auditLog)
		return strings.Contains(string(b), `"authz/secret-reason":"RBAC: allowed by RoleBinding \"writers/default\" of Role \"writer\" to Group \"devs\""`) &&
			strings.Contains(string(b), `"authz/path-error":"false//"`)
	})
}

func mustDo(t *testing.T, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatal(err)
	}
}
