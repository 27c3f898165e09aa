package controlplane

import (
	storagemigrationv1 "k8s.io/api/storagemigration/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/storageversionmigration"
)

// storageMigrationGroup is the table of storagemigration.k8s.io.
// kube-apiserver v1.37 serves v1 StorageVersionMigrations by default
// (v1beta1 is off by default).
var storageMigrationGroup = apiGroup{name: storagemigrationv1.GroupName, versions: []apiVersion{{
	name: "v1",
	resources: []apiResource{
		{name: "storageversionmigrations", storage: storeAndStatus(storageversionmigration.NewREST)},
	},
}}}
