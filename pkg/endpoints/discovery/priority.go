package discovery

import "k8s.io/apimachinery/pkg/runtime/schema"

// Priority orders a group-version in discovery, like an APIService's
// spec.groupPriorityMinimum (Group) and spec.versionPriority (Version):
// higher comes first.
type Priority struct {
	Group   int32
	Version int32
}

// CRDPriority is what a group-version that is not built in gets: the
// priority the CRD registration controller gives the APIServices of CRDs.
var CRDPriority = Priority{Group: 1000, Version: 100}

// APIRegistrationPriority is the aggregator's own group's priority in
// aggregated discovery (kube-aggregator's APIRegistrationGroupPriority). In
// the legacy /apis list upstream puts that group first unconditionally; a
// priority above every built-in group gives the same order.
var APIRegistrationPriority = Priority{Group: 20001, Version: 0}

// builtinPriorities is kube-apiserver's table of APIService priorities for
// built-in group-versions (the generic table merged with kube-apiserver's
// additions), as data: k8s.io/kubernetes v1.37.2
// pkg/controlplane/apiserver/aggregator.go DefaultGenericAPIServicePriorities
// merged with cmd/kube-apiserver/app/aggregator.go apiVersionPriorities
// (TestBuiltinPrioritiesAsUpstream compares them).
var builtinPriorities = map[schema.GroupVersion]Priority{
	{Group: "", Version: "v1"}: {18000, 1},

	{Group: "apiregistration.k8s.io", Version: "v1"}:      APIRegistrationPriority,
	{Group: "apiregistration.k8s.io", Version: "v1beta1"}: APIRegistrationPriority,

	{Group: "apps", Version: "v1"}: {17800, 15},

	{Group: "events.k8s.io", Version: "v1"}:      {17750, 15},
	{Group: "events.k8s.io", Version: "v1beta1"}: {17750, 5},

	{Group: "authentication.k8s.io", Version: "v1"}:       {17700, 15},
	{Group: "authentication.k8s.io", Version: "v1beta1"}:  {17700, 9},
	{Group: "authentication.k8s.io", Version: "v1alpha1"}: {17700, 1},

	{Group: "authorization.k8s.io", Version: "v1"}: {17600, 15},

	{Group: "autoscaling", Version: "v1"}:      {17500, 15},
	{Group: "autoscaling", Version: "v2"}:      {17500, 30},
	{Group: "autoscaling", Version: "v2beta1"}: {17500, 9},
	{Group: "autoscaling", Version: "v2beta2"}: {17500, 1},

	{Group: "batch", Version: "v1"}:       {17400, 15},
	{Group: "batch", Version: "v1beta1"}:  {17400, 9},
	{Group: "batch", Version: "v2alpha1"}: {17400, 9},

	{Group: "certificates.k8s.io", Version: "v1"}:       {17300, 15},
	{Group: "certificates.k8s.io", Version: "v1beta1"}:  {17300, 9},
	{Group: "certificates.k8s.io", Version: "v1alpha1"}: {17300, 1},

	{Group: "networking.k8s.io", Version: "v1"}:      {17200, 15},
	{Group: "networking.k8s.io", Version: "v1beta1"}: {17200, 9},

	{Group: "policy", Version: "v1"}:      {17100, 15},
	{Group: "policy", Version: "v1beta1"}: {17100, 9},

	{Group: "rbac.authorization.k8s.io", Version: "v1"}: {17000, 15},

	{Group: "storage.k8s.io", Version: "v1"}:       {16800, 15},
	{Group: "storage.k8s.io", Version: "v1beta1"}:  {16800, 9},
	{Group: "storage.k8s.io", Version: "v1alpha1"}: {16800, 1},

	{Group: "apiextensions.k8s.io", Version: "v1"}: {16700, 15},

	{Group: "admissionregistration.k8s.io", Version: "v1"}:       {16700, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1beta1"}:  {16700, 12},
	{Group: "admissionregistration.k8s.io", Version: "v1alpha1"}: {16700, 9},

	{Group: "scheduling.k8s.io", Version: "v1"}:       {16600, 15},
	{Group: "scheduling.k8s.io", Version: "v1beta1"}:  {16600, 9},
	{Group: "scheduling.k8s.io", Version: "v1alpha3"}: {16600, 3},

	{Group: "coordination.k8s.io", Version: "v1"}:       {16500, 15},
	{Group: "coordination.k8s.io", Version: "v1beta1"}:  {16500, 13},
	{Group: "coordination.k8s.io", Version: "v1alpha2"}: {16500, 12},

	{Group: "node.k8s.io", Version: "v1"}:       {16300, 15},
	{Group: "node.k8s.io", Version: "v1beta1"}:  {16300, 9},
	{Group: "node.k8s.io", Version: "v1alpha1"}: {16300, 1},

	{Group: "discovery.k8s.io", Version: "v1"}:      {16200, 15},
	{Group: "discovery.k8s.io", Version: "v1beta1"}: {16200, 12},

	{Group: "resource.k8s.io", Version: "v1"}:       {16200, 21},
	{Group: "resource.k8s.io", Version: "v1beta2"}:  {16200, 15},
	{Group: "resource.k8s.io", Version: "v1beta1"}:  {16200, 9},
	{Group: "resource.k8s.io", Version: "v1alpha3"}: {16200, 1},

	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}:       {16100, 21},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3"}:  {16100, 18},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta2"}:  {16100, 15},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta1"}:  {16100, 12},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1alpha1"}: {16100, 9},

	{Group: "internal.apiserver.k8s.io", Version: "v1alpha1"}: {16000, 9},

	{Group: "storagemigration.k8s.io", Version: "v1"}:      {15800, 15},
	{Group: "storagemigration.k8s.io", Version: "v1beta1"}: {15800, 9},

	{Group: "lifecycle.k8s.io", Version: "v1alpha1"}: {15700, 1},
}

// builtinGroupPriorities is the group priority of each built-in group.
var builtinGroupPriorities = func() map[string]int32 {
	m := map[string]int32{}
	for gv, p := range builtinPriorities {
		m[gv.Group] = p.Group
	}
	return m
}()

// DefaultPriority returns kube-apiserver's priority for gv. A version the
// table does not list, of a built-in group, gets the group's priority and
// version priority 1 (upstream would not list it at all); a group that is
// not built in gets [CRDPriority].
func DefaultPriority(gv schema.GroupVersion) Priority {
	if p, ok := builtinPriorities[gv]; ok {
		return p
	}
	if g, ok := builtinGroupPriorities[gv.Group]; ok {
		return Priority{Group: g, Version: 1}
	}
	return CRDPriority
}
