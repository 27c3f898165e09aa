package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// The per-controller roles kube-controller-manager's service accounts use
// (system:controller:<name>, bound to kube-system/<name>). Transcribed, as
// data, from upstream's golden file kubernetes/kubernetes
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/controller-roles.yaml
// at commit 008b3652959ca58af8be3fb5b6ecfe9ae7638282, then checked against
// what a real kube-apiserver v1.37.2 (hack/build-reference.sh) creates with
// its default feature gates (testdata/bootstrap-v1.37.2.json,
// TestBootstrapPolicyMatchesReference). That check added the node
// controller's leases rule and the roles of
// kube-apiserver-serving-clustertrustbundle-publisher (ClusterTrustBundle),
// podcertificaterequestcleaner (PodCertificateRequest) and
// storage-version-migrator-controller (StorageVersionMigrator): those gates
// are on by default in v1.37, their APIs being v1. There is no
// podcheckpoint-controller or storage-version-garbage-collector role in
// v1.37.2.

const controllerRolePrefix = "system:controller:"

// eventsRule is the rule nearly every controller has for recording events.
var eventsRule = rr(eventsVerbs, "- events.k8s.io", "events")

// controllerPolicy lists each controller's rules, by controller name, in
// upstream's rule order (the reconciler compares rules as a set, order
// only matters for readability against the golden file).
var controllerPolicy = []struct {
	name  string
	rules []rbacv1.PolicyRule
}{
	{"attachdetach-controller", []rbacv1.PolicyRule{
		rr("list watch", "-", "persistentvolumeclaims persistentvolumes"),
		rr(readVerbs, "-", "nodes"),
		rr("patch update", "-", "nodes/status"),
		rr("list watch", "-", "pods"),
		eventsRule,
		rr("create delete get list watch", "storage.k8s.io", "volumeattachments"),
		rr(readVerbs, "storage.k8s.io", "csidrivers"),
		rr(readVerbs, "storage.k8s.io", "csinodes"),
	}},
	{"certificate-controller", []rbacv1.PolicyRule{
		rr("delete get list watch", "certificates.k8s.io", "certificatesigningrequests"),
		rr("update", "certificates.k8s.io", "certificatesigningrequests/approval certificatesigningrequests/status"),
		rr("approve", "certificates.k8s.io", "signers", "kubernetes.io/kube-apiserver-client-kubelet"),
		rr("sign", "certificates.k8s.io", "signers", "kubernetes.io/kube-apiserver-client",
			"kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown"),
		rr("create", "authorization.k8s.io", "subjectaccessreviews"),
		eventsRule,
	}},
	{"clusterrole-aggregation-controller", []rbacv1.PolicyRule{
		rr("escalate get list patch update watch", "rbac.authorization.k8s.io", "clusterroles"),
	}},
	{"cronjob-controller", []rbacv1.PolicyRule{
		rr("get list update watch", "batch", "cronjobs"),
		rr("create delete get list patch update watch", "batch", "jobs"),
		rr("update", "batch", "cronjobs/status"),
		rr("update", "batch", "cronjobs/finalizers"),
		rr("delete list watch", "-", "pods"),
		eventsRule,
	}},
	{"daemon-set-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "apps extensions", "daemonsets"),
		rr("update", "apps extensions", "daemonsets/status"),
		rr("update", "apps extensions", "daemonsets/finalizers"),
		rr("list watch", "-", "nodes"),
		rr("create delete list patch watch", "-", "pods"),
		rr("create", "-", "pods/binding"),
		rr(readWriteVerbsNoCollection, "apps", "controllerrevisions"),
		eventsRule,
	}},
	{"deployment-controller", []rbacv1.PolicyRule{
		rr("get list update watch", "apps extensions", "deployments"),
		rr("update", "apps extensions", "deployments/status"),
		rr("update", "apps extensions", "deployments/finalizers"),
		rr(readWriteVerbsNoCollection, "apps extensions", "replicasets"),
		rr("get list update watch", "-", "pods"),
		eventsRule,
	}},
	{"device-taint-eviction-controller", []rbacv1.PolicyRule{
		rr("delete get list watch", "-", "pods"),
		rr("patch update", "-", "pods/status"),
		rr(readVerbs, "resource.k8s.io", "resourceclaims"),
		rr(readVerbs, "resource.k8s.io", "resourceslices"),
		rr(readVerbs, "resource.k8s.io", "deviceclasses"),
		eventsRule,
		// DRADeviceTaintRules is GA and on in v1.37 (off when the golden
		// file was written): upstream's controller_policy.go then adds these.
		rr("patch update", "resource.k8s.io", "devicetaintrules/status"),
		rr(readVerbs, "resource.k8s.io", "devicetaintrules"),
	}},
	{"disruption-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "apps extensions", "deployments"),
		rr(readVerbs, "apps extensions", "replicasets"),
		rr(readVerbs, "-", "replicationcontrollers"),
		rr(readVerbs, "policy", "poddisruptionbudgets"),
		rr(readVerbs, "apps", "statefulsets"),
		rr("update", "policy", "poddisruptionbudgets/status"),
		rr("patch update", "-", "pods/status"),
		rr("get", "*", "*/scale"),
		eventsRule,
	}},
	{"endpoint-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "-", "pods services"),
		rr("create delete get list update watch", "-", "endpoints"),
		rr("create", "-", "endpoints/restricted"),
		eventsRule,
	}},
	{"endpointslice-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "-", "nodes pods services"),
		rr("update", "-", "services/finalizers"),
		rr("create delete get list update watch", "discovery.k8s.io", "endpointslices"),
		eventsRule,
	}},
	{"endpointslicemirroring-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "-", "endpoints services"),
		rr("update", "-", "services/finalizers"),
		rr("update", "-", "endpoints/finalizers"),
		rr("create delete get list update watch", "discovery.k8s.io", "endpointslices"),
		eventsRule,
	}},
	{"ephemeral-volume-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "-", "pods"),
		rr("update", "-", "pods/finalizers"),
		rr("create get list watch", "-", "persistentvolumeclaims"),
		eventsRule,
	}},
	{"expand-controller", []rbacv1.PolicyRule{
		rr("get list patch update watch", "-", "persistentvolumes"),
		rr("patch update", "-", "persistentvolumeclaims/status"),
		rr(readVerbs, "-", "persistentvolumeclaims"),
		eventsRule,
	}},
	{"generic-garbage-collector", []rbacv1.PolicyRule{
		rr("delete get list patch update watch", "*", "*"),
		eventsRule,
	}},
	{"horizontal-pod-autoscaler", []rbacv1.PolicyRule{
		rr(readVerbs, "autoscaling", "horizontalpodautoscalers"),
		rr("update", "autoscaling", "horizontalpodautoscalers/status"),
		rr("get update", "*", "*/scale"),
		rr("list watch", "-", "pods"),
		rr("list watch", "metrics.k8s.io", "pods"),
		rr(readVerbs, "custom.metrics.k8s.io", "*"),
		rr(readVerbs, "external.metrics.k8s.io", "*"),
		eventsRule,
	}},
	{"job-controller", []rbacv1.PolicyRule{
		rr("get list patch update watch", "batch", "jobs"),
		rr("update", "batch", "jobs/status"),
		rr("update", "batch", "jobs/finalizers"),
		rr("create delete list patch watch", "-", "pods"),
		eventsRule,
	}},
	// ClusterTrustBundle (on by default in v1.37: certificates.k8s.io/v1).
	{"kube-apiserver-serving-clustertrustbundle-publisher", []rbacv1.PolicyRule{
		rr("attest", "certificates.k8s.io", "signers", "kubernetes.io/kube-apiserver-serving"),
		rr("create delete list update watch", "certificates.k8s.io", "clustertrustbundles"),
		eventsRule,
	}},
	{"legacy-service-account-token-cleaner", []rbacv1.PolicyRule{
		rr("get", "-", "configmaps", "kube-apiserver-legacy-service-account-token-tracking"),
		rr("delete patch", "-", "secrets"),
	}},
	{"namespace-controller", []rbacv1.PolicyRule{
		rr("delete get list watch", "-", "namespaces"),
		rr("update", "-", "namespaces/finalize namespaces/status"),
		rr("delete deletecollection get list watch", "*", "*"),
	}},
	{"node-controller", []rbacv1.PolicyRule{
		rr("delete get list patch update watch", "-", "nodes"),
		rr("patch update", "-", "nodes/status"),
		rr("patch update", "-", "pods/status"),
		rr("delete get list watch", "-", "pods"),
		rr(readVerbs, "coordination.k8s.io", "leases"),
		eventsRule,
	}},
	{"persistent-volume-binder", []rbacv1.PolicyRule{
		rr("create delete get list update watch", "-", "persistentvolumes"),
		rr("update", "-", "persistentvolumes/status"),
		rr("get list update watch", "-", "persistentvolumeclaims"),
		rr("update", "-", "persistentvolumeclaims/status"),
		rr("create delete get list watch", "-", "pods"),
		rr(readVerbs, "storage.k8s.io", "storageclasses"),
		rr("list watch", "-", "nodes"),
		eventsRule,
		rr("watch", "-", "events"),
	}},
	{"pod-garbage-collector", []rbacv1.PolicyRule{
		rr("delete list watch", "-", "pods"),
		rr(readVerbs, "-", "nodes"),
		rr("patch", "-", "pods/status"),
	}},
	// PodCertificateRequest (on by default in v1.37: certificates.k8s.io/v1).
	{"podcertificaterequestcleaner", []rbacv1.PolicyRule{
		rr("delete get list watch", "certificates.k8s.io", "podcertificaterequests"),
	}},
	{"pv-protection-controller", []rbacv1.PolicyRule{
		rr("get list update watch", "-", "persistentvolumes"),
		eventsRule,
	}},
	{"pvc-protection-controller", []rbacv1.PolicyRule{
		rr("get list update watch", "-", "persistentvolumeclaims"),
		rr("update", "-", "persistentvolumeclaims/status"),
		rr(readVerbs, "-", "pods"),
		eventsRule,
	}},
	{"replicaset-controller", []rbacv1.PolicyRule{
		rr("get list update watch", "apps extensions", "replicasets"),
		rr("update", "apps extensions", "replicasets/status"),
		rr("update", "apps extensions", "replicasets/finalizers"),
		rr("create delete list patch watch", "-", "pods"),
		eventsRule,
	}},
	{"replication-controller", []rbacv1.PolicyRule{
		rr("get list update watch", "-", "replicationcontrollers"),
		rr("update", "-", "replicationcontrollers/status"),
		rr("update", "-", "replicationcontrollers/finalizers"),
		rr("create delete list patch watch", "-", "pods"),
		eventsRule,
	}},
	{"resource-claim-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "-", "pods"),
		rr("update", "-", "pods/finalizers"),
		rr("create delete get list watch", "resource.k8s.io", "resourceclaims"),
		rr("patch update", "resource.k8s.io", "resourceclaims resourceclaims/status"),
		rr("patch update", "-", "pods/status"),
		eventsRule,
		rr("patch update", "resource.k8s.io", "resourceclaims/binding"),
	}},
	{"resourcequota-controller", []rbacv1.PolicyRule{
		rr("list watch", "*", "*"),
		rr("update", "-", "resourcequotas/status"),
		eventsRule,
	}},
	{"root-ca-cert-publisher", []rbacv1.PolicyRule{
		rr("create update", "-", "configmaps"),
		eventsRule,
	}},
	{"route-controller", []rbacv1.PolicyRule{
		rr("list watch", "-", "nodes"),
		rr("patch", "-", "nodes/status"),
		eventsRule,
	}},
	{"selinux-warning-controller", []rbacv1.PolicyRule{
		eventsRule,
		rr(readVerbs, "-", "persistentvolumes"),
		rr(readVerbs, "-", "persistentvolumeclaims"),
		rr(readVerbs, "-", "pods"),
		rr(readVerbs, "storage.k8s.io", "csidrivers"),
	}},
	{"service-account-controller", []rbacv1.PolicyRule{
		rr("create", "-", "serviceaccounts"),
		eventsRule,
	}},
	{"service-cidrs-controller", []rbacv1.PolicyRule{
		rr("get list patch update watch", "networking.k8s.io", "servicecidrs"),
		rr("patch update", "networking.k8s.io", "servicecidrs/finalizers"),
		rr("patch update", "networking.k8s.io", "servicecidrs/status"),
		rr(readVerbs, "networking.k8s.io", "ipaddresses"),
		eventsRule,
	}},
	{"service-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "-", "services"),
		rr("patch update", "-", "services/status"),
		rr("list watch", "-", "nodes"),
		eventsRule,
	}},
	{"statefulset-controller", []rbacv1.PolicyRule{
		rr("list watch", "-", "pods"),
		rr(readVerbs, "apps", "statefulsets"),
		rr("update", "apps", "statefulsets/status"),
		rr("update", "apps", "statefulsets/finalizers"),
		rr("create delete get patch update", "-", "pods"),
		rr(readWriteVerbsNoCollection, "apps", "controllerrevisions"),
		rr("create get list watch", "-", "persistentvolumeclaims"),
		rr("delete update", "-", "persistentvolumeclaims"),
		rr("update", "-", "pods/finalizers"),
		eventsRule,
	}},
	// StorageVersionMigrator (on by default in v1.37: storagemigration.k8s.io/v1).
	{"storage-version-migrator-controller", []rbacv1.PolicyRule{
		rr("list patch", "*", "*"),
		rr("get", "apiextensions.k8s.io", "customresourcedefinitions"),
		rr("patch", "apiextensions.k8s.io", "customresourcedefinitions/status"),
		rr("update", "storagemigration.k8s.io", "storageversionmigrations/status"),
	}},
	{"ttl-after-finished-controller", []rbacv1.PolicyRule{
		rr("delete get list watch", "batch", "jobs"),
		eventsRule,
	}},
	{"ttl-controller", []rbacv1.PolicyRule{
		rr("list patch update watch", "-", "nodes"),
		eventsRule,
	}},
	{"validatingadmissionpolicy-status-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "admissionregistration.k8s.io", "validatingadmissionpolicies"),
		rr("get patch update", "admissionregistration.k8s.io", "validatingadmissionpolicies/status"),
		eventsRule,
	}},
	{"volumeattributesclass-protection-controller", []rbacv1.PolicyRule{
		rr(readVerbs, "-", "persistentvolumeclaims"),
		rr(readVerbs, "-", "persistentvolumes"),
		rr("get list update watch", "storage.k8s.io", "volumeattributesclasses"),
		eventsRule,
	}},
}

// readWriteVerbsNoCollection is every read and write verb but
// deletecollection.
const readWriteVerbsNoCollection = "create delete get list patch update watch"

// controllerClusterRoles returns the system:controller:* ClusterRoles.
func controllerClusterRoles() []rbacv1.ClusterRole {
	out := make([]rbacv1.ClusterRole, 0, len(controllerPolicy))
	for _, c := range controllerPolicy {
		rules := make([]rbacv1.PolicyRule, len(c.rules))
		for i, r := range c.rules {
			rules[i] = *r.DeepCopy()
		}
		out = append(out, clusterRole(controllerRolePrefix+c.name, nil, rules...))
	}
	return out
}

// controllerClusterRoleBindings returns one ClusterRoleBinding per
// controller role, to the service account kube-system/<controller>.
func controllerClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	out := make([]rbacv1.ClusterRoleBinding, 0, len(controllerPolicy))
	for _, c := range controllerPolicy {
		out = append(out, clusterRoleBinding(controllerRolePrefix+c.name,
			subject(rbacv1.ServiceAccountKind, systemNamespace+"/"+c.name)))
	}
	return out
}
