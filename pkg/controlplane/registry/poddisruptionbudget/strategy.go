package poddisruptionbudget

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/policy"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{policyv1.SchemeGroupVersion}

// strategy is the main resource's behaviour: status kept, generation
// bumped on spec changes.
type strategy struct{ generic.SpecGeneration }

// Strategy is the create and update strategy of budgets.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status and strips the label policy/v1beta1
// used for its match-all and match-none selectors from the selector.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pdb := obj.(*policyv1.PodDisruptionBudget)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{}
	stripV1beta1Label(pdb.Spec.Selector)
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pdb := obj.(*policyv1.PodDisruptionBudget)
	pdb.Status = *old.(*policyv1.PodDisruptionBudget).Status.DeepCopy()
	stripV1beta1Label(pdb.Spec.Selector)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return policy.ValidatePodDisruptionBudgetFields(obj.(*policyv1.PodDisruptionBudget), policy.Options{})
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	opts := policy.Options{
		AllowInvalidLabelValueInSelector: metav1validation.LabelSelectorHasInvalidLabelValue(old.(*policyv1.PodDisruptionBudget).Spec.Selector),
	}
	return policy.ValidatePodDisruptionBudgetFields(obj.(*policyv1.PodDisruptionBudget), opts)
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

// StatusStrategy is the update strategy of poddisruptionbudgets/status:
// only the status changes; conditions valid, counts not negative.
var StatusStrategy = generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, _ runtime.Object) field.ErrorList {
		pdb := obj.(*policyv1.PodDisruptionBudget)
		allErrs := validation.ValidateKubeFinalizerNames(pdb.Finalizers, field.NewPath("metadata", "finalizers"))
		return append(allErrs, policy.ValidatePodDisruptionBudgetStatusUpdate(pdb.Status, field.NewPath("status"))...)
	},
	GroupVersions: groupVersions,
}

// v1beta1EmptySelectorLabel is the key of policy/v1beta1's stand-ins for
// an empty selector (match none) and a match-all selector.
const v1beta1EmptySelectorLabel = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"

var (
	matchNoneSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: v1beta1EmptySelectorLabel, Operator: metav1.LabelSelectorOpExists}}}
	matchAllSelector  = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: v1beta1EmptySelectorLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}}
)

// stripV1beta1Label removes the v1beta1 stand-in label from a selector
// unless the selector is exactly one of the stand-ins, as upstream's
// policy/v1 conversion does (kapi does it in the strategy: it has no
// internal version).
func stripV1beta1Label(sel *metav1.LabelSelector) {
	if sel == nil || equality.Semantic.DeepEqual(sel, matchNoneSelector) || equality.Semantic.DeepEqual(sel, matchAllSelector) {
		return
	}
	delete(sel.MatchLabels, v1beta1EmptySelectorLabel)
	kept := sel.MatchExpressions[:0]
	for _, req := range sel.MatchExpressions {
		if req.Key != v1beta1EmptySelectorLabel {
			kept = append(kept, req)
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	sel.MatchExpressions = kept
}
