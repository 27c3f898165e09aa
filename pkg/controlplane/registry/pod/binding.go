package pod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	validationcore "github.com/kapi-dev/kapi/pkg/controlplane/validation/core"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// BindingREST serves pods/binding: a scheduler's assignment of a pod to a
// node (upstream's BindingREST).
type BindingREST struct {
	pods *generic.Store
}

var (
	_ rest.Storage = (*BindingREST)(nil)
	_ rest.Creater = (*BindingREST)(nil)
)

// New implements rest.Storage.
func (*BindingREST) New() runtime.Object { return &corev1.Binding{} }

// Destroy implements rest.Storage: the storage is the pods resource's.
func (*BindingREST) Destroy() {}

// Create implements rest.Creater: the binding's name must be the pod's
// (the URL's), its target a node; the pod gets spec.nodeName, the
// binding's annotations and PodScheduled=True, unless it is being
// deleted, already bound or gated (409 Conflict, as upstream). The
// answer is a Status Success.
func (r *BindingREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	b, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %T", obj))
	}
	name := ""
	if info, ok := request.RequestInfoFrom(ctx); ok {
		name = info.Name
	}
	if name != b.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	// Upstream answers these as a plain (500) error; kapi answers 422.
	if errs := validationcore.ValidatePodBinding(b); len(errs) != 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, b.Name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, b.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	dryRun := options != nil && len(options.DryRun) > 0
	if err := r.assign(ctx, b.UID, b.ResourceVersion, b.Name, b.Target.Name, b.Annotations, b.Labels, dryRun); err != nil {
		return nil, err
	}
	return &metav1.Status{Status: metav1.StatusSuccess}, nil
}

// assign binds pod name to node.
func (r *BindingREST) assign(ctx context.Context, uid types.UID, rv, name, node string, annotations, labels map[string]string, dryRun bool) error {
	key, err := r.pods.KeyFunc(ctx, name)
	if err != nil {
		return err
	}
	var preconditions *storage.Preconditions
	if uid != "" || rv != "" {
		preconditions = &storage.Preconditions{}
		if uid != "" {
			preconditions.UID = &uid
		}
		if rv != "" {
			preconditions.ResourceVersion = &rv
		}
	}
	bind := func(obj runtime.Object) (runtime.Object, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, fmt.Errorf("unexpected object: %T", obj)
		}
		if pod.DeletionTimestamp != nil {
			return nil, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name)
		}
		if pod.Spec.NodeName != "" {
			return nil, fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
		}
		if len(pod.Spec.SchedulingGates) != 0 {
			return nil, fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name)
		}
		pod.Spec.NodeName = node
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		for k, v := range annotations {
			pod.Annotations[k] = v
		}
		// The Binding's labels too, as upstream's setPodNodeAndMetadata
		// (PodTopologyLabels puts the node's topology labels there).
		if len(labels) > 0 && pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		for k, v := range labels {
			pod.Labels[k] = v
		}
		setCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
		return pod, nil
	}
	if dryRun {
		cur := &corev1.Pod{}
		err = r.pods.Storage.Get(ctx, key, storage.GetOptions{}, cur)
		if err == nil {
			err = checkPreconditions(cur, preconditions)
		}
		if err == nil {
			_, err = bind(cur)
		}
	} else {
		err = r.pods.Storage.GuaranteedUpdate(ctx, key, &corev1.Pod{}, false, preconditions, bind, nil)
	}
	if err == nil {
		return nil
	}
	switch {
	case storage.IsNotFound(err):
		return apierrors.NewNotFound(corev1.Resource("pods"), name)
	case storage.IsConflict(err), storage.IsInvalidObj(err):
		return apierrors.NewConflict(corev1.Resource("pods"), name, err)
	}
	var status apierrors.APIStatus
	if ok := asStatus(err, &status); ok {
		return err
	}
	return apierrors.NewConflict(corev1.Resource("pods/binding"), name, err)
}

func checkPreconditions(pod *corev1.Pod, p *storage.Preconditions) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != pod.UID {
		return fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, pod.UID)
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != pod.ResourceVersion {
		return fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, pod.ResourceVersion)
	}
	return nil
}

func asStatus(err error, target *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus) //nolint:errorlint // as upstream: only a status error itself
	if ok {
		*target = s
	}
	return ok
}

// setCondition is upstream's UpdatePodCondition: the condition replaces
// the one of its type (or is added), its transition time now unless its
// status did not change.
func setCondition(status *corev1.PodStatus, c corev1.PodCondition) {
	c.LastTransitionTime = metav1.Now()
	for i := range status.Conditions {
		old := status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if c.Status == old.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		status.Conditions[i] = c
		return
	}
	status.Conditions = append(status.Conditions, c)
}

// LegacyBindingREST serves the bindings resource (POST
// /api/v1/namespaces/{ns}/bindings): a binding named after its pod, as
// pods/binding (upstream's LegacyBindingREST).
type LegacyBindingREST struct {
	binding *BindingREST
}

var (
	_ rest.Storage              = (*LegacyBindingREST)(nil)
	_ rest.Scoper               = (*LegacyBindingREST)(nil)
	_ rest.Creater              = (*LegacyBindingREST)(nil)
	_ rest.SingularNameProvider = (*LegacyBindingREST)(nil)
)

// NewLegacyBindingREST returns the bindings resource of b.
func NewLegacyBindingREST(b *BindingREST) *LegacyBindingREST { return &LegacyBindingREST{binding: b} }

// New implements rest.Storage.
func (*LegacyBindingREST) New() runtime.Object { return &corev1.Binding{} }

// Destroy implements rest.Storage: the storage is the pods resource's.
func (*LegacyBindingREST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (*LegacyBindingREST) NamespaceScoped() bool { return true }

// GetSingularName implements rest.SingularNameProvider.
func (*LegacyBindingREST) GetSingularName() string { return "binding" }

// Create implements rest.Creater: the binding's own name is the pod's.
func (r *LegacyBindingREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	b, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %T", obj))
	}
	info, _ := request.RequestInfoFrom(ctx)
	named := &request.RequestInfo{}
	if info != nil {
		*named = *info
	}
	named.Name = b.Name
	return r.binding.Create(request.WithRequestInfo(ctx, named), obj, createValidation, options)
}
