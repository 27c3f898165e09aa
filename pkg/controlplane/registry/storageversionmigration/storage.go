package storageversionmigration

import (
	"context"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/storagemigration"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = storagemigrationv1.Resource("storageversionmigrations")

var groupVersions = []schema.GroupVersion{storagemigrationv1.SchemeGroupVersion}

// NewREST returns the store of storageversionmigrations and its status
// subresource.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, storagemigrationv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &storagemigrationv1.StorageVersionMigration{} },
		NewListFunc:               func() runtime.Object { return &storagemigrationv1.StorageVersionMigrationList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: storagemigrationv1.Resource("storageversionmigration"),
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, err
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}

type strategy struct{}

// Strategy is the create and update strategy of migrations.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate clears the status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*storagemigrationv1.StorageVersionMigration).Status = storagemigrationv1.StorageVersionMigrationStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*storagemigrationv1.StorageVersionMigration).Status = *old.(*storagemigrationv1.StorageVersionMigration).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return storagemigration.ValidateStorageVersionMigration(obj.(*storagemigrationv1.StorageVersionMigration))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return storagemigration.ValidateStorageVersionMigrationUpdate(obj.(*storagemigrationv1.StorageVersionMigration), old.(*storagemigrationv1.StorageVersionMigration))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object) {}
func (strategy) AllowCreateOnUpdate() bool   { return false }

// AllowUnconditionalUpdate is false as upstream's: an update must carry a
// resourceVersion.
func (strategy) AllowUnconditionalUpdate() bool { return false }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of storageversionmigrations/status.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return storagemigration.ValidateStorageVersionMigrationStatusUpdate(obj.(*storagemigrationv1.StorageVersionMigration), old.(*storagemigrationv1.StorageVersionMigration))
	},
	GroupVersions: groupVersions,
}

// TableConvertor renders migrations as kube-apiserver v1.37.2's
// printStorageVersionMigration (pkg/printers/internalversion/printers.go at
// k8s.io/kubernetes v1.37.2; the columns were observed on that binary):
// NAME (without the "name" format, as upstream's column), RESOURCE (the
// GroupResource's string: "deployments.apps", "secrets") and STATUS (the
// type of the last Running, Failed or Succeeded condition that is True,
// else "Unknown"), no age.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Description: table.ObjectMetaDescriptions["name"]},
		{Name: "Resource", Type: "string", Description: "GroupResource to migrate"},
		{Name: "Status", Type: "string", Description: "Status of the migration"},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		s, ok := obj.(*storagemigrationv1.StorageVersionMigration)
		if !ok {
			return nil, false
		}
		status := "Unknown"
		for _, c := range s.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				continue
			}
			switch c.Type {
			case string(storagemigrationv1.MigrationRunning), string(storagemigrationv1.MigrationFailed), string(storagemigrationv1.MigrationSucceeded):
				status = c.Type
			}
		}
		return []any{s.Name, s.Spec.Resource.String(), status}, true
	},
}
