package eviction

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// replace is an update whose new object is obj, conditional on obj's
// resourceVersion (a conflict when the stored object changed since).
type replace struct{ obj runtime.Object }

var _ rest.UpdatedObjectInfo = replace{}

func (replace) Preconditions() *metav1.Preconditions { return nil }

func (u replace) UpdatedObject(context.Context, runtime.Object) (runtime.Object, error) {
	return u.obj.DeepCopyObject(), nil
}

// disruptionTarget adds (or refreshes) the pod's DisruptionTarget
// condition on the latest stored pod, after checking the eviction's
// preconditions against it.
type disruptionTarget struct {
	options *metav1.DeleteOptions
	now     func() time.Time
}

var _ rest.UpdatedObjectInfo = disruptionTarget{}

func (disruptionTarget) Preconditions() *metav1.Preconditions { return nil }

func (d disruptionTarget) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	stored, ok := old.(*corev1.Pod)
	if !ok || stored == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("updating a pod read %T", old))
	}
	pod := stored.DeepCopy()
	if p := d.options.Preconditions; p != nil {
		if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
			return nil, apierrors.NewConflict(corev1.Resource("Pod"), pod.Name,
				fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
			return nil, apierrors.NewConflict(corev1.Resource("Pod"), pod.Name,
				fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion))
		}
	}
	setDisruptionTarget(pod, d.now())
	// The update is conditional on the version read.
	if m, err := meta.Accessor(pod); err == nil {
		m.SetResourceVersion(stored.ResourceVersion)
	}
	return pod, nil
}

// setDisruptionTarget sets DisruptionTarget=True (reason
// EvictionByEvictionAPI); the transition time changes only when the
// status does, as upstream's UpdatePodCondition.
func setDisruptionTarget(pod *corev1.Pod, now time.Time) {
	cond := corev1.PodCondition{
		Type:               corev1.DisruptionTarget,
		Status:             corev1.ConditionTrue,
		Reason:             "EvictionByEvictionAPI",
		Message:            "Eviction API: evicting",
		LastTransitionTime: metav1.NewTime(now),
	}
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type != corev1.DisruptionTarget {
			continue
		}
		if c.Status == cond.Status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
		*c = cond
		return
	}
	pod.Status.Conditions = append(pod.Status.Conditions, cond)
}
