package bootstrap

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Well-known subjects (upstream k8s.io/apiserver/pkg/authentication/user
// and serviceaccount).
const (
	groupMasters         = "system:masters"
	groupAuthenticated   = "system:authenticated"
	groupUnauthenticated = "system:unauthenticated"
	groupNodes           = "system:nodes"
	groupServiceAccounts = "system:serviceaccounts"
	userControllerMgr    = "system:kube-controller-manager"
	userScheduler        = "system:kube-scheduler"
)

// MandatoryPriorityLevelConfigurations are always present (re-created when
// deleted, spec kept as here).
func MandatoryPriorityLevelConfigurations() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		plc(flowcontrolv1.PriorityLevelConfigurationNameCatchAll, flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](5),
				LendablePercent:          ptr.To[int32](0),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		}),
		plc(flowcontrolv1.PriorityLevelConfigurationNameExempt, flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](0),
				LendablePercent:          ptr.To[int32](0),
			},
		}),
	}
}

// MandatoryFlowSchemas are always present.
func MandatoryFlowSchemas() []*flowcontrolv1.FlowSchema {
	return []*flowcontrolv1.FlowSchema{
		fs("exempt", "exempt", 1, "", everything(groups(groupMasters))),
		fs(flowcontrolv1.FlowSchemaNameCatchAll, flowcontrolv1.PriorityLevelConfigurationNameCatchAll, 10000, flowcontrolv1.FlowDistinguisherMethodByUserType,
			everything(groups(groupUnauthenticated, groupAuthenticated))),
	}
}

// SuggestedPriorityLevelConfigurations are created when missing and kept
// up to date unless their autoupdate-spec annotation says false.
func SuggestedPriorityLevelConfigurations() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		queuing("system", 30, 33, 64, 6, 50),
		queuing("node-high", 40, 25, 64, 6, 50),
		queuing("leader-election", 10, 0, 16, 4, 50),
		queuing("workload-high", 40, 50, 128, 6, 50),
		queuing("workload-low", 100, 90, 128, 6, 50),
		queuing("global-default", 20, 50, 128, 6, 50),
	}
}

// SuggestedFlowSchemas, in upstream's order. kube-apiserver v1.37.2 has no
// workload-leader-election or endpoint-controller schema any more (observed
// on that binary, and absent from k8s.io/apiserver v0.37.2's
// SuggestedFlowSchemas): their requests fall to kube-controller-manager and
// kube-system-service-accounts (workload-high).
func SuggestedFlowSchemas() []*flowcontrolv1.FlowSchema {
	getCreateUpdate := []string{"get", "create", "update"}
	return []*flowcontrolv1.FlowSchema{
		fs("system-nodes", "system", 500, flowcontrolv1.FlowDistinguisherMethodByUserType, everything(groups(groupNodes))),
		fs("system-node-high", "node-high", 400, flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: groups(groupNodes),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				resourceRule([]string{flowcontrolv1.VerbAll}, "", []string{"nodes", "nodes/status"}, true),
				resourceRule([]string{flowcontrolv1.VerbAll}, "coordination.k8s.io", []string{"leases"}, false),
			},
		}),
		fs("probes", "exempt", 2, "", flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: groups(groupUnauthenticated, groupAuthenticated),
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{
				{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/readyz", "/livez"}},
			},
		}),
		fs("system-leader-election", "leader-election", 100, flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: append(users(userControllerMgr, userScheduler), kubeSystemSAs(flowcontrolv1.NameAll)...),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				resourceRule(getCreateUpdate, "coordination.k8s.io", []string{"leases"}, false),
			},
		}),
		fs("kube-controller-manager", "workload-high", 800, flowcontrolv1.FlowDistinguisherMethodByNamespaceType, everything(users(userControllerMgr))),
		fs("kube-scheduler", "workload-high", 800, flowcontrolv1.FlowDistinguisherMethodByNamespaceType, everything(users(userScheduler))),
		fs("kube-system-service-accounts", "workload-high", 900, flowcontrolv1.FlowDistinguisherMethodByNamespaceType, everything(kubeSystemSAs(flowcontrolv1.NameAll))),
		fs("service-accounts", "workload-low", 9000, flowcontrolv1.FlowDistinguisherMethodByUserType, everything(groups(groupServiceAccounts))),
		fs("global-default", "global-default", 9900, flowcontrolv1.FlowDistinguisherMethodByUserType, everything(groups(groupUnauthenticated, groupAuthenticated))),
	}
}

// MandatoryNames reports whether name is a mandatory object's name (the
// same for both kinds: exempt and catch-all).
func MandatoryNames(name string) bool {
	return name == flowcontrolv1.PriorityLevelConfigurationNameExempt || name == flowcontrolv1.PriorityLevelConfigurationNameCatchAll
}

func annotated(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Annotations: map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}}
}

func plc(name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: annotated(name), Spec: spec}
}

func queuing(name string, shares, lendable, queues, handSize, queueLengthLimit int32) *flowcontrolv1.PriorityLevelConfiguration {
	return plc(name, flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To(shares),
			LendablePercent:          ptr.To(lendable),
			LimitResponse: flowcontrolv1.LimitResponse{
				Type:    flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: handSize, QueueLengthLimit: queueLengthLimit},
			},
		},
	})
}

func fs(name, pl string, precedence int32, dm flowcontrolv1.FlowDistinguisherMethodType, rules flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
	var method *flowcontrolv1.FlowDistinguisherMethod
	if dm != "" {
		method = &flowcontrolv1.FlowDistinguisherMethod{Type: dm}
	}
	return &flowcontrolv1.FlowSchema{
		ObjectMeta: annotated(name),
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl},
			MatchingPrecedence:         precedence,
			DistinguisherMethod:        method,
			Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{rules},
		},
	}
}

// everything is subjects with every verb on every resource (namespaced and
// cluster-scoped) and every non-resource URL.
func everything(subjects []flowcontrolv1.Subject) flowcontrolv1.PolicyRulesWithSubjects {
	return flowcontrolv1.PolicyRulesWithSubjects{
		Subjects: subjects,
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
			Verbs:        []string{flowcontrolv1.VerbAll},
			APIGroups:    []string{flowcontrolv1.APIGroupAll},
			Resources:    []string{flowcontrolv1.ResourceAll},
			Namespaces:   []string{flowcontrolv1.NamespaceEvery},
			ClusterScope: true,
		}},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{
			Verbs:           []string{flowcontrolv1.VerbAll},
			NonResourceURLs: []string{flowcontrolv1.NonResourceAll},
		}},
	}
}

func resourceRule(verbs []string, group string, resources []string, clusterScope bool) flowcontrolv1.ResourcePolicyRule {
	return flowcontrolv1.ResourcePolicyRule{
		Verbs:        verbs,
		APIGroups:    []string{group},
		Resources:    resources,
		Namespaces:   []string{flowcontrolv1.NamespaceEvery},
		ClusterScope: clusterScope,
	}
}

func groups(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: n}}
	}
	return out
}

func users(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: n}}
	}
	return out
}

func kubeSystemSAs(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: "kube-system", Name: n}}
	}
	return out
}
