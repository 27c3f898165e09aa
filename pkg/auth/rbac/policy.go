package rbac

import (
	"slices"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The bootstrap policy: the ClusterRoles, ClusterRoleBindings, Roles and
// RoleBindings a fresh kube-apiserver creates, transcribed from upstream's
// golden files (kubernetes/kubernetes
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/cluster-roles.yaml
// at commit 025f2834a128798cef30018a5e6a6ae82b5ad885,
// cluster-role-bindings.yaml, and namespace-role(-bindings).yaml at commit
// 008b3652959ca58af8be3fb5b6ecfe9ae7638282) and policy.go /
// namespace_policy.go, then checked object by object and rule by rule
// against what a real kube-apiserver v1.37.2 with its default feature gates
// creates (testdata/bootstrap-v1.37.2.json, observed on a binary built
// from the k8s.io/kubernetes v1.37.2 module by hack/build-reference.sh;
// TestBootstrapPolicyMatchesReference). The per-controller roles
// (system:controller:*) are in controller_policy.go. Rules added upstream
// since those golden files (events.k8s.io events in view/edit/node,
// resource.k8s.io for DRA, the scheduler's leasecandidates,
// volumeattachments and resourceclaims/binding, kubelet fine-grained
// subresources, nodes/metrics, /flagz and /statusz for monitoring,
// servicecidrs for kube-proxy, the issuer discovery URLs with a trailing
// slash, the kubelet's clustertrustbundles and podcertificaterequests, and
// system:cluster-trust-bundle-discovery) are those v1.37.2 serves.

// Labels and annotations of the bootstrap objects.
const (
	BootstrapLabelKey        = "kubernetes.io/bootstrapping"
	BootstrapLabelValue      = "rbac-defaults"
	AutoUpdateAnnotationKey  = "rbac.authorization.kubernetes.io/autoupdate"
	aggregateToAdmin         = "rbac.authorization.k8s.io/aggregate-to-admin"
	aggregateToEdit          = "rbac.authorization.k8s.io/aggregate-to-edit"
	aggregateToView          = "rbac.authorization.k8s.io/aggregate-to-view"
	readVerbs                = "get list watch"
	writeVerbs               = "create delete deletecollection patch update"
	readWriteVerbs           = "create delete deletecollection get list patch update watch"
	readUpdateVerbs          = "get list patch update watch"
	eventsVerbs              = "create patch update"
	systemNamespace          = "kube-system"
	publicNamespace          = "kube-public"
	authenticationConfigName = "extension-apiserver-authentication"
)

// rr is a resource rule: space-separated verbs, groups ("-" is the core
// group) and resources.
func rr(verbs, groups, resources string, names ...string) rbacv1.PolicyRule {
	g := strings.Fields(groups)
	for i := range g {
		if g[i] == "-" {
			g[i] = ""
		}
	}
	r := rbacv1.PolicyRule{Verbs: strings.Fields(verbs), APIGroups: g, Resources: strings.Fields(resources)}
	if len(names) > 0 {
		r.ResourceNames = names
	}
	return r
}

// nr is a non-resource rule.
func nr(verbs, urls string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: strings.Fields(verbs), NonResourceURLs: strings.Fields(urls)}
}

func clusterRole(name string, labels map[string]string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	l := map[string]string{BootstrapLabelKey: BootstrapLabelValue}
	for k, v := range labels {
		l[k] = v
	}
	return rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{AutoUpdateAnnotationKey: "true"}},
		Rules:      rules,
	}
}

func aggregated(name string, labels map[string]string, selector string) rbacv1.ClusterRole {
	r := clusterRole(name, labels)
	r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{selector: "true"}}}}
	return r
}

func to(label string) map[string]string { return map[string]string{label: "true"} }

// ClusterRoles returns the bootstrap ClusterRoles, sorted by name.
func ClusterRoles() []rbacv1.ClusterRole {
	roles := append(controllerClusterRoles(), []rbacv1.ClusterRole{
		aggregated("admin", nil, aggregateToAdmin),
		clusterRole("cluster-admin", nil, rr("*", "*", "*"), nr("*", "*")),
		aggregated("edit", to(aggregateToAdmin), aggregateToEdit),
		clusterRole("system:aggregate-to-admin", to(aggregateToAdmin),
			rr("create", "authorization.k8s.io", "localsubjectaccessreviews"),
			rr(readWriteVerbs, "rbac.authorization.k8s.io", "rolebindings roles"),
		),
		clusterRole("system:aggregate-to-edit", to(aggregateToEdit),
			rr(readVerbs, "-", "pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy"),
			rr("impersonate", "-", "serviceaccounts"),
			rr(writeVerbs, "-", "pods pods/attach pods/exec pods/portforward pods/proxy"),
			rr("create", "-", "pods/eviction"),
			rr(writeVerbs, "-", "configmaps persistentvolumeclaims replicationcontrollers replicationcontrollers/scale secrets serviceaccounts services services/proxy"),
			rr("create", "-", "serviceaccounts/token"),
			rr(writeVerbs, "- events.k8s.io", "events"),
			rr(writeVerbs, "apps", "daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale statefulsets statefulsets/scale"),
			rr(writeVerbs, "autoscaling", "horizontalpodautoscalers"),
			rr(writeVerbs, "batch", "cronjobs jobs"),
			rr(writeVerbs, "extensions", "daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies replicasets replicasets/scale replicationcontrollers/scale"),
			rr(writeVerbs, "policy", "poddisruptionbudgets"),
			rr(writeVerbs, "networking.k8s.io", "ingresses networkpolicies"),
			rr(readWriteVerbs, "coordination.k8s.io", "leases"),
			rr(writeVerbs, "resource.k8s.io", "resourceclaims resourceclaimtemplates"), // DynamicResourceAllocation (GA)
		),
		clusterRole("system:aggregate-to-view", to(aggregateToView),
			rr(readVerbs, "-", "configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status"),
			rr(readVerbs, "-", "bindings limitranges namespaces/status pods/log pods/status replicationcontrollers/status resourcequotas resourcequotas/status"),
			rr(readVerbs, "-", "namespaces"),
			rr(readVerbs, "- events.k8s.io", "events"),
			rr(readVerbs, "discovery.k8s.io", "endpointslices"),
			rr(readVerbs, "apps", "controllerrevisions daemonsets daemonsets/status deployments deployments/scale deployments/status replicasets replicasets/scale replicasets/status statefulsets statefulsets/scale statefulsets/status"),
			rr(readVerbs, "autoscaling", "horizontalpodautoscalers horizontalpodautoscalers/status"),
			rr(readVerbs, "batch", "cronjobs cronjobs/status jobs jobs/status"),
			rr(readVerbs, "extensions", "daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses ingresses/status networkpolicies replicasets replicasets/scale replicasets/status replicationcontrollers/scale"),
			rr(readVerbs, "policy", "poddisruptionbudgets poddisruptionbudgets/status"),
			rr(readVerbs, "networking.k8s.io", "ingresses ingresses/status networkpolicies"),
			rr(readVerbs, "resource.k8s.io", "resourceclaims resourceclaims/status resourceclaimtemplates"), // DynamicResourceAllocation (GA)
		),
		clusterRole("system:auth-delegator", nil,
			rr("create", "authentication.k8s.io", "tokenreviews"),
			rr("create", "authorization.k8s.io", "subjectaccessreviews"),
		),
		clusterRole("system:basic-user", nil,
			rr("create", "authorization.k8s.io", "selfsubjectaccessreviews selfsubjectrulesreviews"),
			rr("create", "authentication.k8s.io", "selfsubjectreviews"),
		),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:nodeclient", nil,
			rr("create", "certificates.k8s.io", "certificatesigningrequests/nodeclient")),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", nil,
			rr("create", "certificates.k8s.io", "certificatesigningrequests/selfnodeclient")),
		clusterRole("system:certificates.k8s.io:kube-apiserver-client-approver", nil,
			rr("approve", "certificates.k8s.io", "signers", "kubernetes.io/kube-apiserver-client")),
		clusterRole("system:certificates.k8s.io:kube-apiserver-client-kubelet-approver", nil,
			rr("approve", "certificates.k8s.io", "signers", "kubernetes.io/kube-apiserver-client-kubelet")),
		clusterRole("system:certificates.k8s.io:kubelet-serving-approver", nil,
			rr("approve", "certificates.k8s.io", "signers", "kubernetes.io/kubelet-serving")),
		clusterRole("system:certificates.k8s.io:legacy-unknown-approver", nil,
			rr("approve", "certificates.k8s.io", "signers", "kubernetes.io/legacy-unknown")),
		clusterRole("system:discovery", nil,
			nr("get", "/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/")),
		clusterRole("system:heapster", nil,
			rr(readVerbs, "-", "events namespaces nodes pods"),
			rr(readVerbs, "extensions", "deployments"),
		),
		clusterRole("system:kube-aggregator", nil, rr(readVerbs, "-", "endpoints services")),
		clusterRole("system:kube-controller-manager", nil,
			rr(eventsVerbs, "- events.k8s.io", "events"),
			rr("create", "coordination.k8s.io", "leases"),
			rr("get update", "coordination.k8s.io", "leases", "kube-controller-manager"),
			rr("create", "-", "secrets serviceaccounts"),
			rr("delete", "-", "secrets"),
			rr("get", "-", "configmaps namespaces secrets serviceaccounts"),
			rr("update", "-", "secrets serviceaccounts"),
			rr("create", "authentication.k8s.io", "tokenreviews"),
			rr("create", "authorization.k8s.io", "subjectaccessreviews"),
			rr("list watch", "*", "*"),
			rr("create", "-", "serviceaccounts/token"),
		),
		clusterRole("system:cluster-trust-bundle-discovery", nil, // ClusterTrustBundle (on in v1.37)
			rr(readVerbs, "certificates.k8s.io", "clustertrustbundles")),
		clusterRole("system:kube-dns", nil, rr("list watch", "-", "endpoints services")),
		clusterRole("system:kube-scheduler", nil,
			rr(eventsVerbs, "- events.k8s.io", "events"),
			rr("create", "coordination.k8s.io", "leases"),
			rr("get list update watch", "coordination.k8s.io", "leases", "kube-scheduler"),
			rr(readWriteVerbs, "coordination.k8s.io", "leasecandidates"),
			rr(readVerbs, "-", "nodes"),
			rr("delete get list watch", "-", "pods"),
			rr("create", "-", "bindings pods/binding"),
			rr("patch update", "-", "pods/status"),
			rr(readVerbs, "-", "replicationcontrollers services"),
			rr(readVerbs, "apps extensions", "replicasets"),
			rr(readVerbs, "apps", "statefulsets"),
			rr(readVerbs, "policy", "poddisruptionbudgets"),
			rr(readVerbs, "-", "persistentvolumeclaims persistentvolumes"),
			rr("create", "authentication.k8s.io", "tokenreviews"),
			rr("create", "authorization.k8s.io", "subjectaccessreviews"),
			rr(readVerbs, "storage.k8s.io", "csinodes"),
			rr(readVerbs, "storage.k8s.io", "volumeattachments"),
			rr(readVerbs, "-", "namespaces"),
			rr(readVerbs, "storage.k8s.io", "csidrivers"),
			rr(readVerbs, "storage.k8s.io", "csistoragecapacities"),
			// DynamicResourceAllocation (GA).
			rr(readVerbs, "resource.k8s.io", "deviceclasses"),
			rr(readUpdateVerbs, "resource.k8s.io", "resourceclaims"),
			rr(readUpdateVerbs, "resource.k8s.io", "resourceclaims/status"),
			rr("update", "-", "pods/finalizers"),
			rr(readVerbs, "resource.k8s.io", "resourceslices"),
			rr("create delete", "resource.k8s.io", "resourceclaims"), // DRAExtendedResource (GA in v1.37)
			rr(readVerbs, "resource.k8s.io", "devicetaintrules"),     // DRADeviceTaintRules (GA in v1.37)
			rr("patch update", "resource.k8s.io", "resourceclaims/binding"),
		),
		clusterRole("system:kubelet-api-admin", nil,
			rr(readVerbs, "-", "nodes"),
			rr("proxy", "-", "nodes"),
			rr("*", "-", "nodes/log nodes/metrics nodes/proxy nodes/stats"),
			rr("*", "-", "nodes/configz nodes/healthz nodes/pods"), // KubeletFineGrainedAuthz (on by default)
		),
		clusterRole("system:monitoring", nil,
			nr("get", "/flagz /healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/* /statusz"), // ComponentFlagz, ComponentStatusz (on in v1.37)
			rr("get", "-", "nodes/metrics")),
		clusterRole("system:node", nil,
			rr("create", "authentication.k8s.io", "tokenreviews"),
			rr("create", "authorization.k8s.io", "localsubjectaccessreviews subjectaccessreviews"),
			rr(readVerbs, "-", "services"),
			rr("create get list watch", "-", "nodes"),
			rr("patch update", "-", "nodes/status"),
			rr("patch update", "-", "nodes"),
			rr(eventsVerbs, "- events.k8s.io", "events"),
			rr(readVerbs, "-", "pods"),
			rr("create delete", "-", "pods"),
			rr("patch update", "-", "pods/status"),
			rr("create", "-", "pods/eviction"),
			rr(readVerbs, "-", "configmaps secrets"),
			rr("get", "-", "persistentvolumeclaims persistentvolumes"),
			rr("get", "-", "endpoints"),
			rr("create get list watch", "certificates.k8s.io", "certificatesigningrequests"),
			rr("create delete get patch update", "coordination.k8s.io", "leases"),
			rr("get", "storage.k8s.io", "volumeattachments"),
			rr("create", "-", "serviceaccounts/token"),
			rr("get patch update", "-", "persistentvolumeclaims/status"),
			rr(readVerbs, "storage.k8s.io", "csidrivers"),
			rr("create delete get patch update", "storage.k8s.io", "csinodes"),
			rr(readVerbs, "node.k8s.io", "runtimeclasses"),
			rr("get", "resource.k8s.io", "resourceclaims"),                               // DynamicResourceAllocation (GA)
			rr("deletecollection", "resource.k8s.io", "resourceslices"),                  // DynamicResourceAllocation (GA)
			rr(readVerbs, "certificates.k8s.io", "clustertrustbundles"),                  // ClusterTrustBundle(Projection) (on in v1.37)
			rr("get", "-", "serviceaccounts"),                                            // KubeletServiceAccountTokenForCredentialProviders (on by default)
			rr("create get list watch", "certificates.k8s.io", "podcertificaterequests"), // PodCertificateRequest (on in v1.37)
		),
		clusterRole("system:node-bootstrapper", nil,
			rr("create get list watch", "certificates.k8s.io", "certificatesigningrequests")),
		clusterRole("system:node-problem-detector", nil,
			rr("get", "-", "nodes"),
			rr("patch", "-", "nodes/status"),
			rr(eventsVerbs, "- events.k8s.io", "events"),
		),
		clusterRole("system:node-proxier", nil,
			rr("list watch", "-", "endpoints services"),
			rr(readVerbs, "-", "nodes"),
			rr(eventsVerbs, "- events.k8s.io", "events"),
			rr("list watch", "networking.k8s.io", "servicecidrs"), // MultiCIDRServiceAllocator (GA)
			rr("list watch", "discovery.k8s.io", "endpointslices"),
		),
		clusterRole("system:persistent-volume-provisioner", nil,
			rr("create delete get list watch", "-", "persistentvolumes"),
			rr("get list update watch", "-", "persistentvolumeclaims"),
			rr(readVerbs, "storage.k8s.io", "storageclasses"),
			rr("watch", "-", "events"),
			rr(eventsVerbs, "- events.k8s.io", "events"),
		),
		clusterRole("system:public-info-viewer", nil,
			nr("get", "/healthz /livez /readyz /version /version/")),
		clusterRole("system:service-account-issuer-discovery", nil,
			nr("get", "/.well-known/openid-configuration /.well-known/openid-configuration/ /openid/v1/jwks /openid/v1/jwks/")),
		clusterRole("system:volume-scheduler", nil,
			rr("get list patch update watch", "-", "persistentvolumes"),
			rr(readVerbs, "storage.k8s.io", "storageclasses"),
			rr("get list patch update watch", "-", "persistentvolumeclaims"),
		),
		aggregated("view", to(aggregateToEdit), aggregateToView),
	}...)
	slices.SortFunc(roles, func(a, b rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	return roles
}

func subject(kind, name string) rbacv1.Subject {
	s := rbacv1.Subject{Kind: kind, Name: name, APIGroup: rbacv1.GroupName}
	if kind == rbacv1.ServiceAccountKind {
		s.APIGroup = ""
		s.Namespace, s.Name, _ = strings.Cut(name, "/")
	}
	return s
}

func clusterRoleBinding(name string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{BootstrapLabelKey: BootstrapLabelValue},
			Annotations: map[string]string{AutoUpdateAnnotationKey: "true"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: subjects,
	}
}

// ClusterRoleNames returns the names of ClusterRoles, in its order. The
// policy is fixed: the names are computed once per process (every server's
// bootstrap waits for them; building the whole policy for its names cost
// a start ~2,500 allocations).
func ClusterRoleNames() []string { return slices.Clone(clusterRoleNames()) }

var clusterRoleNames = sync.OnceValue(func() []string {
	roles := ClusterRoles()
	names := make([]string, len(roles))
	for i := range roles {
		names[i] = roles[i].Name
	}
	return names
})

// ClusterRoleBindingNames returns the names of ClusterRoleBindings, in its
// order, computed once per process (see ClusterRoleNames).
func ClusterRoleBindingNames() []string { return slices.Clone(clusterRoleBindingNames()) }

var clusterRoleBindingNames = sync.OnceValue(func() []string {
	bindings := ClusterRoleBindings()
	names := make([]string, len(bindings))
	for i := range bindings {
		names[i] = bindings[i].Name
	}
	return names
})

// ClusterRoleBindings returns the bootstrap ClusterRoleBindings, sorted by
// name. (system:node has no subjects: upstream's Node authorizer decides
// for kubelets.)
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	const u, g = rbacv1.UserKind, rbacv1.GroupKind
	everyone := []rbacv1.Subject{subject(g, "system:authenticated"), subject(g, "system:unauthenticated")}
	bindings := append(controllerClusterRoleBindings(), []rbacv1.ClusterRoleBinding{
		clusterRoleBinding("cluster-admin", subject(g, "system:masters")),
		clusterRoleBinding("system:basic-user", subject(g, "system:authenticated")),
		clusterRoleBinding("system:cluster-trust-bundle-discovery", subject(g, "system:serviceaccounts")),
		clusterRoleBinding("system:discovery", subject(g, "system:authenticated")),
		clusterRoleBinding("system:kube-controller-manager", subject(u, "system:kube-controller-manager")),
		clusterRoleBinding("system:kube-dns", subject(rbacv1.ServiceAccountKind, "kube-system/kube-dns")),
		clusterRoleBinding("system:kube-scheduler", subject(u, "system:kube-scheduler")),
		clusterRoleBinding("system:monitoring", subject(g, "system:monitoring")),
		clusterRoleBinding("system:node"),
		clusterRoleBinding("system:node-proxier", subject(u, "system:kube-proxy")),
		clusterRoleBinding("system:public-info-viewer", everyone...),
		clusterRoleBinding("system:service-account-issuer-discovery", subject(g, "system:serviceaccounts")),
		clusterRoleBinding("system:volume-scheduler", subject(u, "system:kube-scheduler")),
	}...)
	slices.SortFunc(bindings, func(a, b rbacv1.ClusterRoleBinding) int { return strings.Compare(a.Name, b.Name) })
	return bindings
}

// Roles returns the bootstrap Roles (namespace_policy.go).
func Roles() []rbacv1.Role {
	role := func(ns, name string, rules ...rbacv1.PolicyRule) rbacv1.Role {
		return rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{BootstrapLabelKey: BootstrapLabelValue},
				Annotations: map[string]string{AutoUpdateAnnotationKey: "true"}},
			Rules: rules,
		}
	}
	leaderLocking := []rbacv1.PolicyRule{
		rr("create get list update watch", "coordination.k8s.io", "leases"),
		rr("create get list update watch", "coordination.k8s.io", "leasecandidates"),
	}
	return []rbacv1.Role{
		role(publicNamespace, "system:controller:bootstrap-signer",
			rr(readVerbs, "-", "configmaps"),
			rr("update", "-", "configmaps", "cluster-info"),
			eventsRule),
		role(systemNamespace, "extension-apiserver-authentication-reader",
			rr(readVerbs, "-", "configmaps", authenticationConfigName)),
		role(systemNamespace, "system::leader-locking-kube-controller-manager", leaderLocking...),
		role(systemNamespace, "system::leader-locking-kube-scheduler", leaderLocking...),
		role(systemNamespace, "system:controller:bootstrap-signer", rr(readVerbs, "-", "secrets")),
		role(systemNamespace, "system:controller:cloud-provider", rr("create get list watch", "-", "configmaps")),
		role(systemNamespace, "system:controller:token-cleaner",
			rr("delete get list watch", "-", "secrets"),
			eventsRule),
	}
}

// RoleBindings returns the bootstrap RoleBindings (namespace_policy.go).
func RoleBindings() []rbacv1.RoleBinding {
	binding := func(ns, name, role string, subjects ...rbacv1.Subject) rbacv1.RoleBinding {
		return rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{BootstrapLabelKey: BootstrapLabelValue},
				Annotations: map[string]string{AutoUpdateAnnotationKey: "true"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
			Subjects: subjects,
		}
	}
	const u, sa = rbacv1.UserKind, rbacv1.ServiceAccountKind
	return []rbacv1.RoleBinding{
		binding(publicNamespace, "system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
			subject(sa, "kube-system/bootstrap-signer")),
		binding(systemNamespace, "system::extension-apiserver-authentication-reader", "extension-apiserver-authentication-reader",
			subject(u, "system:kube-controller-manager"), subject(u, "system:kube-scheduler")),
		binding(systemNamespace, "system::leader-locking-kube-controller-manager", "system::leader-locking-kube-controller-manager",
			subject(u, "system:kube-controller-manager"), subject(sa, "kube-system/kube-controller-manager"),
			subject(sa, "kube-system/leader-election-controller")),
		binding(systemNamespace, "system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler",
			subject(u, "system:kube-scheduler"), subject(sa, "kube-system/kube-scheduler")),
		binding(systemNamespace, "system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
			subject(sa, "kube-system/bootstrap-signer")),
		binding(systemNamespace, "system:controller:cloud-provider", "system:controller:cloud-provider",
			subject(sa, "kube-system/cloud-provider")),
		binding(systemNamespace, "system:controller:token-cleaner", "system:controller:token-cleaner",
			subject(sa, "kube-system/token-cleaner")),
	}
}

// NodeRules are the rules of the system:node ClusterRole, which the Node
// authorizer applies to every node for the resources it does not subdivide
// (upstream's bootstrappolicy.NodeRules).
func NodeRules() []rbacv1.PolicyRule {
	for _, r := range ClusterRoles() {
		if r.Name == "system:node" {
			return r.Rules
		}
	}
	return nil
}
