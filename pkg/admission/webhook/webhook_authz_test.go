package webhook_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestMatchConditionAuthorizer: a webhook's matchConditions may check
// the request's user with the authorizer library (upstream's
// ValidatingWebhook.matchConditions documentation: "'authorizer' - A CEL
// Authorizer"): the webhook denies configmaps of users who may not
// delete them, so it is called for an RBAC user who may only create, and
// not for the admin.
func TestMatchConditionAuthorizer(t *testing.T) {
	hooks := startHooks(t)
	s := kapitest.Start(t)
	admin := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	if _, err := admin.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "creator"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "creator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "creator"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &arv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "authz"},
		Webhooks: []arv1.ValidatingWebhook{validatingHook("authz.kapi.test", arv1.WebhookClientConfig{URL: hooks.url("/deny"), CABundle: hooks.caBundle}, func(w *arv1.ValidatingWebhook) {
			w.MatchConditions = []arv1.MatchCondition{
				{Name: "may-not-delete", Expression: "!authorizer.requestResource.check('delete').allowed()"},
				{Name: "may-create", Expression: "authorizer.group('').resource('configmaps').namespace('default').check('create').allowed()"},
			}
		})},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bobCfg, err := s.AddUser(kapitest.User{Name: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	bob := kubernetes.NewForConfigOrDie(bobCfg).CoreV1().ConfigMaps("default")
	attempt := 0
	eventually(t, "webhook in effect", func() bool {
		attempt++
		_, err = bob.Create(ctx, cm("bob"+strconv.Itoa(attempt), "authz.kapi.test"), metav1.CreateOptions{})
		return err != nil
	})
	if want := "configmaps named bob" + strconv.Itoa(attempt) + " are not welcome"; !strings.Contains(err.Error(), want) {
		t.Errorf("bob: %v, want the webhook's denial %q", err, want)
	}
	n := hooks.count("/deny")
	if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, cm("admin", "authz.kapi.test"), metav1.CreateOptions{}); err != nil {
		t.Errorf("admin: %v", err)
	}
	if hooks.count("/deny") != n {
		t.Errorf("the webhook was called for the admin, who may delete configmaps")
	}
}
