package volumeprotection

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// PVCFinalizer is the finalizer the StorageObjectInUseProtection admission
// plugin puts on every claim (kubernetes pkg/volume/util,
// PVCProtectionFinalizer).
const PVCFinalizer = "kubernetes.io/pvc-protection"

// podPVCIndex indexes pods by the "<namespace>/<claim>" keys of the claims
// their volumes name (upstream's common.PodPVCIndexFunc, same name).
const podPVCIndex = "pod-pvc-index"

// The Unused condition's reasons and messages (upstream's
// pvc_protection_controller.go, v1.37).
const (
	reasonPodUsing   = "PodUsingPVC"
	messagePodUsing  = "A pod is currently referencing this PVC"
	reasonNoPodUsing = "NoPodsUsingPVC"
	messageNoPod     = "No pods are currently referencing this PVC"
)

// PVCController is the persistentvolumeclaim-protection-controller.
type PVCController struct {
	client kubernetes.Interface
	claims corelisters.PersistentVolumeClaimLister
	pods   cache.Indexer
	loop   *loop
	now    func() metav1.Time
}

// NewPVC returns the controller on the shared claim and pod informers (the
// caller starts them); it adds its pod index to the pod informer.
func NewPVC(client kubernetes.Interface, claims coreinformers.PersistentVolumeClaimInformer, pods coreinformers.PodInformer, logger *slog.Logger) (*PVCController, error) {
	c := &PVCController{client: client, claims: claims.Lister(), pods: pods.Informer().GetIndexer(), now: metav1.Now}
	c.loop = newLoop("pvcprotection", logger, c.sync)
	if err := pods.Informer().AddIndexers(cache.Indexers{podPVCIndex: podClaimKeys}); err != nil {
		return nil, fmt.Errorf("pvc protection: pod index: %w", err)
	}
	ch, err := claims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.claimChanged,
		UpdateFunc: func(_, obj any) { c.claimChanged(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("pvc protection: claim informer: %w", err)
	}
	ph, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.podChanged(nil, obj) },
		UpdateFunc: func(old, obj any) {
			c.podChanged(old, obj)
		},
		DeleteFunc: func(obj any) { c.podChanged(nil, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("pvc protection: pod informer: %w", err)
	}
	c.loop.waitFor = []cache.DoneChecker{ch.HasSyncedChecker(), ph.HasSyncedChecker()}
	return c, nil
}

// Run runs the controller until ctx ends.
func (c *PVCController) Run(ctx context.Context) { c.loop.Run(ctx, 1) }

// HasSynced reports whether the informers were synced.
func (c *PVCController) HasSynced() bool { return c.loop.HasSynced() }

func (c *PVCController) claimChanged(obj any) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	// As upstream: a claim without the Unused condition (to be given
	// one if bound), or one needing the finalizer added or removed.
	if findUnused(pvc.Status.Conditions) == nil || needsFinalizer(&pvc.ObjectMeta, PVCFinalizer) || deletionCandidate(&pvc.ObjectMeta, PVCFinalizer) {
		c.loop.queue.Add(pvc.Namespace + "/" + pvc.Name)
	}
}

// podChanged queues the claims a pod names; an update that replaced one pod
// by another of the same name queues the old pod's claims too.
func (c *PVCController) podChanged(old, obj any) {
	pod := podOf(obj)
	if pod == nil {
		return
	}
	for _, key := range claimKeys(pod) {
		c.loop.queue.Add(key)
	}
	if oldPod := podOf(old); oldPod != nil && oldPod.UID != pod.UID {
		for _, key := range claimKeys(oldPod) {
			c.loop.queue.Add(key)
		}
	}
}

func (c *PVCController) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key this controller queued; dropped
	}
	pvc, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pvc.DeletionTimestamp == nil && pvc.Status.Phase == corev1.ClaimBound {
		used, err := c.used(ctx, pvc, referencesForUnused)
		if err != nil {
			return err
		}
		if err := c.updateUnused(ctx, pvc, used); err != nil {
			return err
		}
	}
	if deletionCandidate(&pvc.ObjectMeta, PVCFinalizer) {
		used, err := c.used(ctx, pvc, usesForDeletion)
		if err != nil {
			return err
		}
		if !used {
			return c.setFinalizer(ctx, pvc, false)
		}
		c.loop.logger.Debug("keeping the claim: a pod uses it", "claim", key)
	}
	if needsFinalizer(&pvc.ObjectMeta, PVCFinalizer) {
		return c.setFinalizer(ctx, pvc, true)
	}
	return nil
}

// used reports whether a pod uses pvc by uses: a pod of the informer, or
// else of a live list of the namespace (the informer may lag).
func (c *PVCController) used(ctx context.Context, pvc *corev1.PersistentVolumeClaim, uses func(*corev1.Pod, *corev1.PersistentVolumeClaim) bool) (bool, error) {
	objs, err := c.pods.ByIndex(podPVCIndex, pvc.Namespace+"/"+pvc.Name)
	if err == nil {
		for _, obj := range objs {
			if pod, ok := obj.(*corev1.Pod); ok && uses(pod, pvc) {
				return true, nil
			}
		}
	}
	list, err := c.client.CoreV1().Pods(pvc.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("live list of pods: %w", err)
	}
	for i := range list.Items {
		if uses(&list.Items[i], pvc) {
			return true, nil
		}
	}
	return false, nil
}

// setFinalizer adds (or removes) the finalizer with an update, as upstream
// (a conflict is retried from the informer's next copy).
func (c *PVCController) setFinalizer(ctx context.Context, pvc *corev1.PersistentVolumeClaim, add bool) error {
	cp := pvc.DeepCopy()
	cp.Finalizers = withFinalizer(cp.Finalizers, PVCFinalizer, add)
	if _, err := c.client.CoreV1().PersistentVolumeClaims(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the finalizers of claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	c.loop.logger.Debug("claim finalizer changed", "claim", pvc.Namespace+"/"+pvc.Name, "added", add)
	return nil
}

// updateUnused sets the Unused condition when it does not say what used
// says (a missing condition is set either way).
func (c *PVCController) updateUnused(ctx context.Context, pvc *corev1.PersistentVolumeClaim, used bool) error {
	existing := findUnused(pvc.Status.Conditions)
	switch {
	case used && (existing == nil || existing.Status == corev1.ConditionTrue):
		return c.setUnused(ctx, pvc, corev1.ConditionFalse, reasonPodUsing, messagePodUsing)
	case !used && (existing == nil || existing.Status != corev1.ConditionTrue):
		return c.setUnused(ctx, pvc, corev1.ConditionTrue, reasonNoPodUsing, messageNoPod)
	}
	return nil
}

func (c *PVCController) setUnused(ctx context.Context, pvc *corev1.PersistentVolumeClaim, status corev1.ConditionStatus, reason, message string) error {
	cp := pvc.DeepCopy()
	cond := corev1.PersistentVolumeClaimCondition{
		Type: corev1.PersistentVolumeClaimUnused, Status: status,
		LastTransitionTime: c.now(), Reason: reason, Message: message,
	}
	if existing := findUnused(cp.Status.Conditions); existing != nil {
		*existing = cond
	} else {
		cp.Status.Conditions = append(cp.Status.Conditions, cond)
	}
	if _, err := c.client.CoreV1().PersistentVolumeClaims(cp.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the Unused condition of claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	return nil
}

func findUnused(conds []corev1.PersistentVolumeClaimCondition) *corev1.PersistentVolumeClaimCondition {
	for i := range conds {
		if conds[i].Type == corev1.PersistentVolumeClaimUnused {
			return &conds[i]
		}
	}
	return nil
}

// usesForDeletion: a scheduled pod naming the claim, or owning it as a
// generic ephemeral volume unless the pod is shut down (upstream's
// podUsesPVCForDeletion: an unscheduled pod never started, and the kubelet
// will not start one whose claim is being deleted).
func usesForDeletion(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if pod.Spec.NodeName == "" {
		return false
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if !shutDown(pod) && ephemeralClaimOf(pod, v, pvc) {
			return true
		}
	}
	return false
}

// referencesForUnused: a pod that has not terminated naming the claim or
// owning it as a generic ephemeral volume (upstream's
// podUsesPVCForUnusedSince).
func referencesForUnused(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if terminated(pod) {
		return false
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name || ephemeralClaimOf(pod, v, pvc) {
			return true
		}
	}
	return false
}

// ephemeralClaimOf reports whether v is a generic ephemeral volume of pod
// whose claim is pvc: named "<pod>-<volume>" and controlled by the pod
// (component-helpers storage/ephemeral).
func ephemeralClaimOf(pod *corev1.Pod, v *corev1.Volume, pvc *corev1.PersistentVolumeClaim) bool {
	return v.Ephemeral != nil && pod.Name+"-"+v.Name == pvc.Name &&
		pvc.Namespace == pod.Namespace && metav1.IsControlledBy(pvc, pod)
}

// shutDown: deleted with a zero grace period (the kubelet is done with it,
// or it was force-deleted).
func shutDown(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
}

// terminated is kubernetes pkg/volume/util IsPodTerminated: failed or
// succeeded, or deleted with no container running.
func terminated(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	notRunning := func(statuses []corev1.ContainerStatus) bool {
		for _, s := range statuses {
			if s.State.Terminated == nil && s.State.Waiting == nil {
				return false
			}
		}
		return true
	}
	st := &pod.Status
	return pod.DeletionTimestamp != nil && notRunning(st.InitContainerStatuses) && notRunning(st.ContainerStatuses) && notRunning(st.EphemeralContainerStatuses)
}

// claimKeys are the "<namespace>/<claim>" keys of the claims pod's volumes
// name.
func claimKeys(pod *corev1.Pod) []string {
	var keys []string
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.PersistentVolumeClaim != nil:
			keys = append(keys, pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			keys = append(keys, pod.Namespace+"/"+pod.Name+"-"+v.Name)
		}
	}
	return keys
}

func podClaimKeys(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	return claimKeys(pod), nil
}

// podOf is the pod of an informer notification (a tombstone's too).
func podOf(obj any) *corev1.Pod {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o
	case cache.DeletedFinalStateUnknown:
		pod, _ := o.Obj.(*corev1.Pod)
		return pod
	}
	return nil
}

// deletionCandidate: being deleted and holding finalizer.
func deletionCandidate(m *metav1.ObjectMeta, finalizer string) bool {
	return m.DeletionTimestamp != nil && slices.Contains(m.Finalizers, finalizer)
}

// needsFinalizer: not being deleted and lacking finalizer.
func needsFinalizer(m *metav1.ObjectMeta, finalizer string) bool {
	return m.DeletionTimestamp == nil && !slices.Contains(m.Finalizers, finalizer)
}

// withFinalizer is finalizers with f added (add) or removed.
func withFinalizer(finalizers []string, f string, add bool) []string {
	if add {
		return append(finalizers, f)
	}
	return slices.DeleteFunc(finalizers, func(s string) bool { return s == f })
}
