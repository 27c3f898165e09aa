package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadAndValidate(t *testing.T) {
	write := func(s string) string {
		p := filepath.Join(t.TempDir(), "authz.yaml")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: RBAC
  name: rbac
- type: Webhook
  name: webhook
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    authorizedTTL: 30s
    unauthorizedTTL: 10s
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: /etc/webhook.kubeconfig
    matchConditions:
    - expression: has(request.resourceAttributes)
`
	c, err := Load(write(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Authorizers) != 2 || c.Authorizers[1].Webhook.Timeout.Duration.String() != "3s" || c.Authorizers[1].Webhook.MatchConditions[0].Expression != "has(request.resourceAttributes)" {
		t.Errorf("got %+v", c)
	}

	if _, err := Load(write(good + "unknown: 1\n")); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Errorf("unknown field: %v", err)
	}

	bad := `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: RBAC
  name: a
- type: RBAC
  name: a
- type: Magic
  name: m
- type: Webhook
  name: w
  webhook:
    timeout: 40s
    subjectAccessReviewVersion: v2
    failurePolicy: Maybe
    connectionInfo:
      type: KubeConfigFile
    matchConditions:
    - expression: "true"
    - expression: "true"
- type: Webhook
  name: w2
`
	_, err = Load(write(bad))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`authorizers[1].type: Duplicate value: "RBAC"`,
		`authorizers[1].name: Duplicate value: "a"`,
		`authorizers[2].type: Unsupported value: "Magic"`,
		`authorizers[3].webhook.timeout: Invalid value: "40s": must be > 0s and <= 30s`,
		`authorizers[3].webhook.subjectAccessReviewVersion: Unsupported value: "v2"`,
		`authorizers[3].webhook.matchConditionSubjectAccessReviewVersion: Required value`,
		`authorizers[3].webhook.failurePolicy: Unsupported value: "Maybe"`,
		`authorizers[3].webhook.connectionInfo.kubeConfigFile: Required value`,
		`authorizers[3].webhook.matchConditions[1].expression: Duplicate value: "true"`,
		`authorizers[4].webhook: Required value: required when type=Webhook`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
	errs := Validate(&Configuration{})
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	if !slices.Equal(got, []string{"apiVersion", "kind", "authorizers"}) {
		t.Errorf("empty: got %v", got)
	}
}
