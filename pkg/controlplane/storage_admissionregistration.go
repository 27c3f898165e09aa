package controlplane

import (
	arv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/mutatingadmissionpolicy"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/mutatingadmissionpolicybinding"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/mutatingwebhookconfiguration"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/validatingadmissionpolicy"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/validatingadmissionpolicybinding"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/validatingwebhookconfiguration"
)

// admissionRegistrationGroup is the table of admissionregistration.k8s.io:
// the webhook configurations the admission webhooks read, the validating
// admission policies (with status) and their bindings.
var admissionRegistrationGroup = apiGroup{name: arv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "mutatingwebhookconfigurations", storage: storeOf(mutatingwebhookconfiguration.NewREST)},
		{name: "validatingwebhookconfigurations", storage: storeOf(validatingwebhookconfiguration.NewREST)},
		{name: "validatingadmissionpolicies", storage: storeAndStatus(validatingadmissionpolicy.NewREST)},
		{name: "validatingadmissionpolicybindings", storage: storeOf(validatingadmissionpolicybinding.NewREST)},
		{name: "mutatingadmissionpolicies", storage: storeOf(mutatingadmissionpolicy.NewREST)},
		{name: "mutatingadmissionpolicybindings", storage: storeOf(mutatingadmissionpolicybinding.NewREST)},
	},
}}}

var (
	mutatingWebhooksResource   = arv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
	validatingWebhooksResource = arv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
	policiesResource           = arv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")
	policyBindingsResource     = arv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings")
	mutatingPoliciesResource   = arv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies")
	mutatingBindingsResource   = arv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings")
)
