package prioritylevelconfiguration

import (
	"context"
	"reflect"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/flowcontrol"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{flowcontrolv1.SchemeGroupVersion}

// Upstream's declarative validators check the unions of spec.exempt and
// spec.limited with spec.type, and of limitResponse.queuing with its type,
// before the fields (k8s.io/kubernetes@v1.37.2
// pkg/apis/flowcontrol/v1/zz_generated.validations.go).
func init() {
	generic.RegisterDeclarativeTypeRules(reflect.TypeOf(flowcontrolv1.PriorityLevelConfigurationSpec{}), "exempt", "limited")
	generic.RegisterDeclarativeTypeRules(reflect.TypeOf(flowcontrolv1.LimitResponse{}), "queuing")
}

type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of PriorityLevelConfigurations.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate clears the status.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*flowcontrolv1.PriorityLevelConfiguration).Status = flowcontrolv1.PriorityLevelConfigurationStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*flowcontrolv1.PriorityLevelConfiguration).Status = *old.(*flowcontrolv1.PriorityLevelConfiguration).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return flowcontrol.ValidatePriorityLevelConfiguration(obj.(*flowcontrolv1.PriorityLevelConfiguration))
}

func (strategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return flowcontrol.ValidatePriorityLevelConfiguration(obj.(*flowcontrolv1.PriorityLevelConfiguration))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: apply to the main resource does not own status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// StatusStrategy is the update strategy of prioritylevelconfigurations/status.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, _ runtime.Object) field.ErrorList {
		return flowcontrol.ValidatePriorityLevelConfigurationStatus(&obj.(*flowcontrolv1.PriorityLevelConfiguration).Status, field.NewPath("status"))
	},
	GroupVersions: groupVersions,
}
