package controlplane

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/configmap"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/endpoints"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/event"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/limitrange"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/namespace"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/node"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/persistentvolume"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/persistentvolumeclaim"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/pod"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/podtemplate"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/replicationcontroller"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/resourcequota"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/secret"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/service"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// coreGroup is the table of the core ("legacy") group, served at /api.
var coreGroup = apiGroup{name: corev1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "namespaces", storage: namespaceStorage, fieldLabels: namespace.FieldLabelConversion},
		{name: "configmaps", storage: storeOf(configmap.NewREST)},
		{name: "secrets", storage: storeOf(secret.NewREST), fieldLabels: secret.FieldLabelConversion},
		{name: "serviceaccounts", storage: serviceAccountStorage},
		{name: "events", storage: storeOf(event.NewREST), fieldLabels: event.FieldLabelConversion},
		{name: "services", storage: serviceStorage, fieldLabels: service.FieldLabelConversion},
		{name: "endpoints", storage: storeOf(endpoints.NewREST)},
		{name: "nodes", storage: nodeStorage, fieldLabels: node.FieldLabelConversion},
		{name: "persistentvolumes", storage: statusStoreOf(persistentvolume.NewREST)},
		{name: "persistentvolumeclaims", storage: statusStoreOf(persistentvolumeclaim.NewREST)},
		{name: "replicationcontrollers", storage: replicationControllerStorage, fieldLabels: replicationcontroller.FieldLabelConversion},
		{name: "limitranges", storage: storeOf(limitrange.NewREST)},
		{name: "resourcequotas", storage: statusStoreOf(resourcequota.NewREST)},
		{name: "componentstatuses", storage: withConfig(componentStatusStorage)},
		{name: "pods", storage: podStorage, fieldLabels: pod.FieldLabelConversion},
		{name: "podtemplates", storage: storeOf(podtemplate.NewREST)},
		{name: "bindings", storage: legacyBindingStorage},
	},
}}}

// Lines of the core group other lines or the core server's controllers
// use.
var (
	namespacesResource = corev1.SchemeGroupVersion.WithResource("namespaces")
	configMapsResource = corev1.SchemeGroupVersion.WithResource("configmaps")
	eventsResource     = corev1.SchemeGroupVersion.WithResource("events")
	servicesResource   = corev1.SchemeGroupVersion.WithResource("services")
	endpointsResource  = corev1.SchemeGroupVersion.WithResource("endpoints")
)

// namespaceStorage is the namespaces line: the resource and its status
// and finalize subresources.
func namespaceStorage(b *storageBuilder) (resourceStorage, error) {
	ns, status, finalize, err := namespace.NewREST(b.opts)
	if err != nil {
		return resourceStorage{}, err
	}
	return resourceStorage{storage: ns, subresources: map[string]rest.Storage{"status": status, "finalize": finalize}}, nil
}

// podStorage is the pods line: the resource and its subresources. The
// connection subresources read nodes through the nodes line when the
// table has one; "eviction" is served when the policy table has budgets
// (see addEviction).
func podStorage(b *storageBuilder) (resourceStorage, error) {
	var c pod.Config
	nodes := corev1.SchemeGroupVersion.WithResource("nodes")
	if _, ok := b.lines[nodes]; ok {
		rs, err := b.storage(nodes)
		if err != nil {
			return resourceStorage{}, err
		}
		getter, ok := rs.storage.(pod.NodeGetter)
		if !ok {
			return resourceStorage{}, fmt.Errorf("controlplane: the storage of %s is a %T, not a node getter", nodes, rs.storage)
		}
		c.Nodes = getter
	}
	st, err := pod.NewREST(b.opts, c)
	if err != nil {
		return resourceStorage{}, err
	}
	subresources := st.Subresources()
	if err := addEviction(b, st, subresources); err != nil {
		st.Pod.Destroy()
		return resourceStorage{}, err
	}
	return resourceStorage{storage: st.Pod, subresources: subresources}, nil
}

// legacyBindingStorage is the bindings line: POST of a Binding named after
// its pod, through the pods line's binding subresource.
func legacyBindingStorage(b *storageBuilder) (resourceStorage, error) {
	binding, err := subresourceAs[*pod.BindingREST](b, corev1.SchemeGroupVersion.WithResource("pods"), "binding")
	if err != nil {
		return resourceStorage{}, err
	}
	return resourceStorage{storage: pod.NewLegacyBindingREST(binding), shared: true}, nil
}
