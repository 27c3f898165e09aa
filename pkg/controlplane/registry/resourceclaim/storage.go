package resourceclaim

import (
	"context"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/resource"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = resourcev1.Resource("resourceclaims")

var groupVersions = []schema.GroupVersion{resourcev1.SchemeGroupVersion}

// NewREST returns the store of resourceclaims and its status subresource.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, resourcev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &resourcev1.ResourceClaim{} },
		NewListFunc:               func() runtime.Object { return &resourcev1.ResourceClaimList{} },
		ReturnDeletedObject:       true, // as upstream: DELETE answers with the object
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: resourcev1.Resource("resourceclaim"),
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

// Strategy is the create and update strategy of claims.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status and drops the fields of features
// that are off by default.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	c := obj.(*resourcev1.ResourceClaim)
	c.Status = resourcev1.ResourceClaimStatus{}
	DropDisabledSpecFields(&c.Spec, nil)
}

// PrepareForUpdate keeps the stored status and drops the fields of
// features that are off by default and that the stored claim does not use.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, oldC := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
	c.Status = *oldC.Status.DeepCopy()
	DropDisabledSpecFields(&c.Spec, &oldC.Spec)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return resource.ValidateResourceClaim(obj.(*resourcev1.ResourceClaim))
}

// ValidateUpdate checks only that the spec did not change, as upstream's
// ValidateResourceClaimUpdate: the user cannot change the rest.
func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return resource.ValidateResourceClaimUpdate(obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of resourceclaims/status.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return resource.ValidateResourceClaimStatusUpdate(obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim))
	},
	PrepareStatus: func(obj, old runtime.Object) {
		dropSkipNodeOperations(obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim))
	},
	GroupVersions: groupVersions,
}

// dropSkipNodeOperations is upstream's
// dropDisabledDRAOptionalNodeOperationsStatusFields with v1.37.2's default
// gates (DRAOptionalNodeOperations off): the allocation results'
// skipNodeOperations are dropped from a status write unless the stored
// claim already uses them.
func dropSkipNodeOperations(claim, old *resourcev1.ResourceClaim) {
	if a := old.Status.Allocation; a != nil {
		for _, r := range a.Devices.Results {
			if len(r.SkipNodeOperations) > 0 {
				return
			}
		}
	}
	if a := claim.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			a.Devices.Results[i].SkipNodeOperations = nil
		}
	}
}

// TableConvertor renders claims as upstream's printResourceClaim
// (pkg/printers/internalversion/printers.go, v1.37): NAME STATE AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "State", Type: "string", Description: "A summary of the current state (allocated, pending, reserved, etc.)."},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		c, ok := obj.(*resourcev1.ResourceClaim)
		if !ok {
			return nil, false
		}
		return []any{c.Name, State(c), table.Since(c.CreationTimestamp)}, true
	},
}

// State is a claim's STATE cell (upstream's resourceClaimState): deleted,
// then pending or allocated(,reserved).
func State(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	if c.Status.Allocation == nil {
		if c.DeletionTimestamp == nil {
			states = append(states, "pending")
		}
	} else {
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return strings.Join(states, ",")
}
