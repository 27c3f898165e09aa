package controlplane

import (
	arv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/mutatingwebhookconfiguration"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/validatingwebhookconfiguration"
)

// admissionRegistrationGroup is the table of admissionregistration.k8s.io:
// the webhook configurations the admission webhooks read.
var admissionRegistrationGroup = apiGroup{name: arv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "mutatingwebhookconfigurations", storage: storeOf(mutatingwebhookconfiguration.NewREST)},
		{name: "validatingwebhookconfigurations", storage: storeOf(validatingwebhookconfiguration.NewREST)},
	},
}}}

var (
	mutatingWebhooksResource   = arv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
	validatingWebhooksResource = arv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
)
