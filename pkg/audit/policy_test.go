package audit

import (
	"reflect"
	"strings"
	"testing"
)

// TestEvaluatePolicyRule follows upstream's checker_test.go cases
// (k8s.io/apiserver pkg/audit/policy/checker_test.go).
func TestEvaluatePolicyRule(t *testing.T) {
	p, err := ParsePolicy([]byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: [tim]
- level: Metadata
  userGroups: [admins]
  verbs: [delete]
- level: Request
  namespaces: [prod]
  resources:
  - group: ""
    resources: [pods/log, "*/status"]
  - group: apps
    resources: ["deployments/*"]
  omitManagedFields: false
- level: RequestResponse
  resources:
  - group: ""
    resources: [secrets]
    resourceNames: [top]
  omitStages: [ResponseStarted]
- level: Metadata
  nonResourceURLs: ["/metrics", "/logs*"]
- level: Request
  namespaces: [""]
`))
	if err != nil {
		t.Fatal(err)
	}
	e := NewPolicyEvaluator(p)
	for _, tc := range []struct {
		name string
		a    Attributes
		want Policy
	}{
		{"user", Attributes{User: "tim", Verb: "get", IsResourceRequest: true, Resource: "pods"}, Policy{Level: LevelNone, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"group and verb", Attributes{User: "a", Groups: []string{"x", "admins"}, Verb: "delete", IsResourceRequest: true, Resource: "pods"}, Policy{Level: LevelMetadata, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"group, other verb", Attributes{User: "a", Groups: []string{"admins"}, Verb: "get", IsResourceRequest: true, Namespace: "x", Resource: "pods"}, Policy{Level: LevelNone, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"subresource", Attributes{Verb: "get", IsResourceRequest: true, Namespace: "prod", Resource: "pods", Subresource: "log"}, Policy{Level: LevelRequest, OmitStages: []Stage{StageRequestReceived}}},
		{"*/status", Attributes{Verb: "update", IsResourceRequest: true, Namespace: "prod", Resource: "nodes", Subresource: "status"}, Policy{Level: LevelRequest, OmitStages: []Stage{StageRequestReceived}}},
		{"resource without subresource does not match pods/log", Attributes{Verb: "get", IsResourceRequest: true, Namespace: "prod", Resource: "pods"}, Policy{Level: LevelNone, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"deployments/*", Attributes{Verb: "get", IsResourceRequest: true, Namespace: "prod", APIGroup: "apps", Resource: "deployments", Subresource: "scale"}, Policy{Level: LevelRequest, OmitStages: []Stage{StageRequestReceived}}},
		{"other namespace", Attributes{Verb: "get", IsResourceRequest: true, Namespace: "dev", Resource: "pods", Subresource: "log"}, Policy{Level: LevelNone, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"resourceNames", Attributes{Verb: "get", IsResourceRequest: true, Namespace: "x", Resource: "secrets", Name: "top"}, Policy{Level: LevelRequestResponse, OmitStages: []Stage{StageRequestReceived, StageResponseStarted}, OmitManagedFields: true}},
		{"resourceNames other name", Attributes{Verb: "get", IsResourceRequest: true, Namespace: "x", Resource: "secrets", Name: "low"}, Policy{Level: LevelNone, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"non-resource exact", Attributes{Verb: "get", Path: "/metrics"}, Policy{Level: LevelMetadata, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"non-resource prefix", Attributes{Verb: "get", Path: "/logs/kube.log"}, Policy{Level: LevelMetadata, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"non-resource rule does not match resources", Attributes{Verb: "get", IsResourceRequest: true, Resource: "metrics"}, Policy{Level: LevelRequest, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"cluster-scoped is namespace \"\"", Attributes{Verb: "get", IsResourceRequest: true, Resource: "nodes"}, Policy{Level: LevelRequest, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
		{"namespace rule does not match non-resource", Attributes{Verb: "get", Path: "/healthz"}, Policy{Level: LevelNone, OmitStages: []Stage{StageRequestReceived}, OmitManagedFields: true}},
	} {
		if got := e.EvaluatePolicyRule(tc.a); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestParsePolicyErrors(t *testing.T) {
	for _, tc := range []struct{ policy, want string }{
		{"apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n", "unsupported policy audit.k8s.io/v1beta1"},
		{"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n", "loaded illegal policy with 0 rules"},
		{"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n", `rules[0].level: Unsupported value: "Everything"`},
		{"apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Later]\nrules:\n- level: None\n", `omitStages[0]: Unsupported value: "Later"`},
		{"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [/a]\n  namespaces: [x]\n", "rules cannot apply to both regular resources and non-resource URLs"},
		{"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: ['/a*/b']\n", "may only use wildcards ('*') at the end"},
		{"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  resources: [{group: a/b}]\n", "group name cannot contain '/'"},
		{"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  bogus: 1\n", "unknown field"},
	} {
		_, err := ParsePolicy([]byte(tc.policy))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.policy, err, tc.want)
		}
	}
}
