package controlplane

import (
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/csidriver"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/csinode"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/csistoragecapacity"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/storageclass"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/volumeattachment"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/volumeattributesclass"
)

// storageGroup is the table of storage.k8s.io: v1 only (kube-apiserver
// v1.37 serves no beta version of these resources by default;
// VolumeAttributesClass is v1 since v1.34).
var storageGroup = apiGroup{name: storagev1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "storageclasses", storage: storeOf(storageclass.NewREST)},
		{name: "csidrivers", storage: storeOf(csidriver.NewREST)},
		{name: "csinodes", storage: storeAndStatus(csinode.NewREST)},
		{name: "csistoragecapacities", storage: storeOf(csistoragecapacity.NewREST)},
		{name: "volumeattachments", storage: storeAndStatus(volumeattachment.NewREST)},
		{name: "volumeattributesclasses", storage: storeOf(volumeattributesclass.NewREST)},
	},
}}}
