package node

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{corev1.SchemeGroupVersion}

// strategy is the main resource's behaviour (upstream's nodeStrategy):
// cluster-scoped, no create-on-update, unconditional updates allowed. A
// node is created with the status its writer gives (kubelets register
// with theirs), the deprecated spec.configSource and status.config
// dropped; updates keep the stored status.
type strategy struct{}

// Strategy is the create and update strategy of nodes.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate drops the fields of the removed dynamic kubelet
// configuration (spec.configSource, status.config) and
// spec.podPreemptionPolicy (its gate is off by default in v1.37.2), as
// upstream's dropDisabledFields does on create.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	n := obj.(*corev1.Node)
	n.Spec.ConfigSource = nil
	n.Status.Config = nil
	n.Spec.PodPreemptionPolicy = nil
}

// PrepareForUpdate keeps the stored status, and drops spec.configSource
// and spec.podPreemptionPolicy (InPlacePodVerticalScalingSchedulerPreemption,
// alpha, off by default in v1.37.2) unless the stored node already has
// them.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, o := obj.(*corev1.Node), old.(*corev1.Node)
	n.Status = *o.Status.DeepCopy()
	if o.Spec.ConfigSource == nil {
		n.Spec.ConfigSource = nil
	}
	if o.Spec.PodPreemptionPolicy == nil {
		n.Spec.PodPreemptionPolicy = nil
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return core.ValidateNodeFields(obj.(*corev1.Node))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return core.ValidateNodeSpecUpdateFields(obj.(*corev1.Node), old.(*corev1.Node))
}

// WarningsOnCreate warns about deprecated fields, as upstream.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return deprecatedFieldWarnings(obj.(*corev1.Node))
}

// WarningsOnUpdate warns about deprecated fields, as upstream.
func (strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return deprecatedFieldWarnings(obj.(*corev1.Node))
}

// deprecatedFieldWarnings are upstream's warnings for spec.configSource
// and spec.externalID.
func deprecatedFieldWarnings(n *corev1.Node) []string {
	var out []string
	if n.Spec.ConfigSource != nil {
		out = append(out, "spec.configSource: the feature is removed")
	}
	if n.Spec.DoNotUseExternalID != "" {
		out = append(out, "spec.externalID: this field is deprecated, and is unused by Kubernetes")
	}
	return out
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is nodes/status's (upstream's nodeStatusStrategy): the
// stored spec is kept, status.config is dropped unless already set, and
// the update is validated as upstream's ValidateNodeUpdate.
type statusStrategy struct{ generic.StatusStrategy }

// StatusStrategy is the update strategy of nodes/status.
var StatusStrategy = statusStrategy{generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		return core.ValidateNodeUpdateFields(obj.(*corev1.Node), old.(*corev1.Node))
	},
	GroupVersions: groupVersions,
}}

// PrepareForUpdate keeps everything but the status, and drops a new
// status.config.
func (s statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.StatusStrategy.PrepareForUpdate(ctx, obj, old)
	if old.(*corev1.Node).Status.Config == nil {
		obj.(*corev1.Node).Status.Config = nil
	}
}

// FieldLabels are the fields nodes can be selected by, besides
// metadata.name.
var FieldLabels = []string{"spec.unschedulable"}

// FieldLabelConversion accepts the field selector labels of core/v1 nodes
// (upstream's conversion.go: metadata.name and spec.unschedulable), for
// the scheme's AddFieldLabelConversionFunc.
var FieldLabelConversion = generic.FieldLabelConversion("metadata.name", "spec.unschedulable")

// GetAttrs returns a node's labels and selectable fields: metadata.name
// and spec.unschedulable ("true" or "false").
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return nil, nil, fmt.Errorf("not a node: %T", obj)
	}
	return labels.Set(n.Labels), fields.Set{
		"metadata.name":      n.Name,
		"spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable),
	}, nil
}
