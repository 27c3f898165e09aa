package podsecurity

import (
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// TestMetrics: the pod_security_* series upstream records
// (k8s.io/pod-security-admission metrics/metrics.go and
// admission/admission.go, v1.37) for evaluations in each mode, "future"
// versions, exemptions, fatal and non-fatal errors, with the series
// created at registration.
func TestMetrics(t *testing.T) {
	cfg := `{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration",
"exemptions":{"namespaces":["exempt"]}}`
	p := mustNew(t, cfg, namespaces{
		"strict": {EnforceLevelLabel: "restricted", AuditLevelLabel: "restricted", WarnLevelLabel: "restricted"},
		"open":   nil,
		"exempt": nil,
		"future": {EnforceLevelLabel: "baseline", EnforceVersionLabel: "v1.99"},
		"bad":    {EnforceLevelLabel: "bogus"},
	}, nil)
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p.SetMetrics(m)
	dep := admission.Attributes{Operation: admission.Update, Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Namespace: "strict", Name: "d", Object: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: barePod("").Spec}}}}
	for _, a := range []admission.Attributes{
		podCreate("strict", barePod("p")), // enforce deny, audit deny (no warning on a denial)
		podCreate("open", barePod("p")),   // fully privileged: enforce allow
		podCreate("exempt", barePod("p")), // exempt namespace
		podCreate("future", barePod("p")), // baseline v1.99: enforce allow, version "future"
		podCreate("bad", barePod("p")),    // invalid label: non-fatal error, restricted enforced
		podCreate("gone", barePod("p")),   // namespace missing: fatal error
		dep,                               // controller: audit and warn deny
	} {
		run(t, p, a)
	}
	want := `
# HELP pod_security_errors_total [ALPHA] Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.
# TYPE pod_security_errors_total counter
pod_security_errors_total{fatal="false",request_operation="create",resource="pod",subresource=""} 1
pod_security_errors_total{fatal="true",request_operation="create",resource="pod",subresource=""} 1
# HELP pod_security_evaluations_total [ALPHA] Number of policy evaluations that occurred, not counting ignored or exempt requests.
# TYPE pod_security_evaluations_total counter
pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="baseline",policy_version="future",request_operation="create",resource="pod",subresource=""} 1
pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="privileged",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1
pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="privileged",policy_version="latest",request_operation="update",resource="pod",subresource=""} 0
pod_security_evaluations_total{decision="deny",mode="audit",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1
pod_security_evaluations_total{decision="deny",mode="audit",policy_level="restricted",policy_version="latest",request_operation="update",resource="controller",subresource=""} 1
pod_security_evaluations_total{decision="deny",mode="enforce",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 2
pod_security_evaluations_total{decision="deny",mode="warn",policy_level="restricted",policy_version="latest",request_operation="update",resource="controller",subresource=""} 1
# HELP pod_security_exemptions_total [ALPHA] Number of exempt requests, not counting ignored or out of scope requests.
# TYPE pod_security_exemptions_total counter
pod_security_exemptions_total{request_operation="create",resource="controller",subresource=""} 0
pod_security_exemptions_total{request_operation="create",resource="pod",subresource=""} 1
pod_security_exemptions_total{request_operation="update",resource="controller",subresource=""} 0
pod_security_exemptions_total{request_operation="update",resource="pod",subresource=""} 0
`
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		got = append(got, "# HELP "+mf.GetName()+" "+mf.GetHelp(), "# TYPE "+mf.GetName()+" counter")
		for _, mt := range mf.GetMetric() {
			var ls []string
			for _, l := range mt.GetLabel() {
				ls = append(ls, l.GetName()+"="+strconv.Quote(l.GetValue()))
			}
			got = append(got, mf.GetName()+"{"+strings.Join(ls, ",")+"} "+strconv.FormatFloat(mt.GetCounter().GetValue(), 'f', -1, 64))
		}
	}
	if g, w := strings.Join(got, "\n"), strings.TrimSpace(want); g != w {
		t.Errorf("metrics:\n%s\nwant:\n%s", g, w)
	}
}
