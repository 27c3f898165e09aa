package pod

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	validationcore "github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

var groupVersions = []schema.GroupVersion{corev1.SchemeGroupVersion}

// strategy is the pods resource's behaviour (upstream's podStrategy).
type strategy struct{ generic.SpecGeneration }

// Strategy is the create, update and delete strategy of pods.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.DeleteStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate fills in what the API server sets on a new pod
// (status, generation, scheduling-gated condition, label-key selectors,
// AppArmor fields), warning about deprecated AppArmor annotations, and
// drops the fields of features that are off by default.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	defaultscorev1.DropDisabledPodSpecFields(&obj.(*corev1.Pod).Spec, nil)
	for _, w := range defaultscorev1.PrepareForCreate(obj.(*corev1.Pod)) {
		warning.AddWarning(ctx, w)
	}
}

// PrepareForUpdate keeps the stored status, and the stored pod-level
// resources when the update drops them all (a client that does not know
// the field; v1.37's PrepareForUpdate with PodLevelResourcesFixDefaulting),
// and drops the fields of features that are off by default and that the
// stored pod does not use.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	pod.Status = *oldPod.Status.DeepCopy()
	defaultscorev1.DropDisabledPodSpecFields(&pod.Spec, &oldPod.Spec)
	if pod.Spec.Resources == nil && oldPod.Spec.Resources != nil {
		pod.Spec.Resources = oldPod.Spec.Resources.DeepCopy()
	}
}

func podOptions(pod, old *corev1.Pod) validationcore.PodValidationOptions {
	var opts validationcore.PodValidationOptions
	if old == nil {
		opts = validationcore.ValidationOptionsForPodSpec(&pod.Spec, nil, &pod.ObjectMeta, nil)
	} else {
		opts = validationcore.ValidationOptionsForPodSpec(&pod.Spec, &old.Spec, &pod.ObjectMeta, &old.ObjectMeta)
	}
	opts.ResourceIsPod = true
	return opts
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	pod := obj.(*corev1.Pod)
	return validationcore.ValidatePodFields(pod, podOptions(pod, nil))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	return validationcore.ValidatePodUpdateFields(pod, oldPod, podOptions(pod, oldPod))
}

// WarningsOnCreate: a name that is not a DNS label (it becomes the
// hostname), and the deprecations upstream's GetWarningsForPod reports.
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	pod := obj.(*corev1.Pod)
	var out []string
	if msgs := utilvalidation.IsDNS1123Label(pod.Name); len(msgs) != 0 {
		out = append(out, fmt.Sprintf("metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: %v", msgs))
	}
	return append(out, validationcore.PodSpecWarnings(&pod.ObjectMeta, &pod.Spec, nil)...)
}

// WarningsOnUpdate: none (as upstream: pods are updated by machines).
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: the main resource does not own status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// CheckGracefulDelete gives every delete a grace period: the request's,
// else the pod's terminationGracePeriodSeconds, but 0 for a pod that is
// not scheduled or has terminated, and 1 for a negative one.
func (strategy) CheckGracefulDelete(_ context.Context, obj runtime.Object, options *metav1.DeleteOptions) bool {
	if options == nil {
		return false
	}
	pod := obj.(*corev1.Pod)
	var period int64
	switch {
	case options.GracePeriodSeconds != nil:
		period = *options.GracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	options.GracePeriodSeconds = &period
	return true
}

// statusStrategy is pods/status's (upstream's podStatusStrategy): the
// spec and owner references stay, metadata otherwise follows the request,
// a QoS class left out and observed generations left at 0 are kept.
type statusStrategy struct{ generic.StatusStrategy }

// StatusStrategy is the update strategy of pods/status.
var StatusStrategy = statusStrategy{generic.StatusStrategy{
	UpdateStrategy: Strategy,
	ValidateStatus: func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
		return validationcore.ValidatePodStatusUpdateFields(pod, oldPod, podOptions(pod, oldPod))
	},
	GroupVersions: groupVersions,
}}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	pod.Spec = *oldPod.Spec.DeepCopy()
	pod.DeletionTimestamp = nil
	pod.OwnerReferences = oldPod.OwnerReferences
	if pod.Status.QOSClass == "" {
		pod.Status.QOSClass = oldPod.Status.QOSClass
	}
	if pod.Status.ObservedGeneration == 0 {
		pod.Status.ObservedGeneration = oldPod.Status.ObservedGeneration
	}
	oldGenerations := map[corev1.PodConditionType][]int64{}
	for _, c := range oldPod.Status.Conditions {
		oldGenerations[c.Type] = append(oldGenerations[c.Type], c.ObservedGeneration)
	}
	for i, c := range pod.Status.Conditions {
		var g int64
		if gens := oldGenerations[c.Type]; len(gens) > 0 {
			g, oldGenerations[c.Type] = gens[0], gens[1:]
		}
		if c.ObservedGeneration == 0 {
			pod.Status.Conditions[i].ObservedGeneration = g
		}
	}
}

// WarningsOnUpdate: IPs written in a non-canonical form.
func (statusStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	pod := obj.(*corev1.Pod)
	var out []string
	for i, ip := range pod.Status.PodIPs {
		out = append(out, utilvalidation.GetWarningsForIP(field.NewPath("status", "podIPs").Index(i).Child("ip"), ip.IP)...)
	}
	for i, ip := range pod.Status.HostIPs {
		out = append(out, utilvalidation.GetWarningsForIP(field.NewPath("status", "hostIPs").Index(i).Child("ip"), ip.IP)...)
	}
	return out
}

// GetResetFields: status updates do not own the spec, the deletion
// timestamp or the owner references.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"}, []string{"metadata", "deletionTimestamp"}, []string{"metadata", "ownerReferences"})
}

// subresourceStrategy is the update strategy of pods/ephemeralcontainers
// and pods/resize: only what the subresource changes is kept from the
// request (keep), the rest of the spec, the status and the metadata
// upstream resets for status writes come from the stored pod; a spec
// change bumps the generation.
type subresourceStrategy struct {
	strategy
	keep     func(pod, old *corev1.Pod)
	validate func(pod, old *corev1.Pod, opts validationcore.PodValidationOptions) field.ErrorList
}

func (s subresourceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	s.keep(pod, oldPod)
	defaultscorev1.DropDisabledPodSpecFields(&pod.Spec, &oldPod.Spec)
	pod.Status = *oldPod.Status.DeepCopy()
	// metav1.ResetObjectMetaForStatus.
	pod.DeletionTimestamp = oldPod.DeletionTimestamp
	pod.Labels = oldPod.Labels
	pod.Annotations = oldPod.Annotations
	pod.Finalizers = oldPod.Finalizers
	pod.OwnerReferences = oldPod.OwnerReferences
}

func (s subresourceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	return s.validate(pod, oldPod, podOptions(pod, oldPod))
}

func (subresourceStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// EphemeralContainersStrategy is pods/ephemeralcontainers': only
// spec.ephemeralContainers changes.
var EphemeralContainersStrategy = subresourceStrategy{
	keep: func(pod, old *corev1.Pod) {
		ecs := pod.Spec.EphemeralContainers
		pod.Spec = *old.Spec.DeepCopy()
		pod.Spec.EphemeralContainers = ecs
	},
	validate: validationcore.ValidatePodEphemeralContainersUpdateFields,
}

// ResizeStrategy is pods/resize': only the resources and resize
// policies of containers and init containers change (a request that adds,
// removes, reorders or renames containers is left as sent, for
// validation to reject).
var ResizeStrategy = subresourceStrategy{
	keep: func(pod, old *corev1.Pod) {
		if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
			return
		}
		merge := func(in, oldList []corev1.Container) ([]corev1.Container, bool) {
			out := make([]corev1.Container, len(oldList))
			for i := range oldList {
				if oldList[i].Name != in[i].Name {
					return nil, false
				}
				out[i] = *oldList[i].DeepCopy()
				out[i].Resources = in[i].Resources
				out[i].ResizePolicy = in[i].ResizePolicy
			}
			return out, true
		}
		containers, ok1 := merge(pod.Spec.Containers, old.Spec.Containers)
		inits, ok2 := merge(pod.Spec.InitContainers, old.Spec.InitContainers)
		if !ok1 || !ok2 {
			return
		}
		// InPlacePodLevelResourcesVerticalScaling (beta, on in v1.37):
		// the pod-level resources are resized too; a request without
		// them keeps the stored ones.
		podLevel := pod.Spec.Resources
		if podLevel == nil && old.Spec.Resources != nil {
			podLevel = old.Spec.Resources.DeepCopy()
		}
		pod.Spec = *old.Spec.DeepCopy()
		pod.Spec.Containers = containers
		if len(inits) > 0 {
			pod.Spec.InitContainers = inits
		}
		pod.Spec.Resources = podLevel
		// The pod-level resources are completed from the resized
		// containers (PodLevelResourcesFixDefaulting).
		if pod.Spec.Resources != nil {
			defaultscorev1.DefaultPodLevelResources(pod)
		}
	},
	validate: validationcore.ValidatePodResizeFields,
}

// GetResetFields: these subresources do not own status.
func (subresourceStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// The fields pods can be selected by.
const (
	fieldNodeName           = "spec.nodeName"
	fieldRestartPolicy      = "spec.restartPolicy"
	fieldSchedulerName      = "spec.schedulerName"
	fieldServiceAccountName = "spec.serviceAccountName"
	fieldHostNetwork        = "spec.hostNetwork"
	fieldPhase              = "status.phase"
	fieldPodIP              = "status.podIP"
	fieldPodIPs             = "status.podIPs"
	fieldNominatedNodeName  = "status.nominatedNodeName"
)

// FieldLabels are the fields pods can be selected by, besides
// metadata.name and metadata.namespace (status.podIPs is accepted but
// never set, as upstream).
var FieldLabels = []string{
	fieldNodeName, fieldRestartPolicy, fieldSchedulerName, fieldServiceAccountName, fieldHostNetwork,
	fieldPhase, fieldPodIP, fieldPodIPs, fieldNominatedNodeName,
}

// FieldLabelConversion accepts the field selector labels of core/v1 pods
// and turns the old clients' spec.host into spec.nodeName.
func FieldLabelConversion(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace":
		return label, value, nil
	case "spec.host":
		return fieldNodeName, value, nil
	}
	for _, l := range FieldLabels {
		if l == label {
			return label, value, nil
		}
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// GetAttrs returns a pod's labels and selectable fields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil, fmt.Errorf("not a pod: %T", obj)
	}
	ls, fs, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	fs[fieldNodeName] = pod.Spec.NodeName
	fs[fieldRestartPolicy] = string(pod.Spec.RestartPolicy)
	fs[fieldSchedulerName] = pod.Spec.SchedulerName
	fs[fieldServiceAccountName] = pod.Spec.ServiceAccountName
	fs[fieldHostNetwork] = strconv.FormatBool(pod.Spec.HostNetwork)
	fs[fieldPhase] = string(pod.Status.Phase)
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	fs[fieldPodIP] = podIP
	fs[fieldNominatedNodeName] = pod.Status.NominatedNodeName
	return ls, fs, nil
}
