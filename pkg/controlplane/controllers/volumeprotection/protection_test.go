package volumeprotection_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/volumeprotection"
)

// eventually polls cond every 20 ms for up to 30 s.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	testwait.For(t, 30*time.Second, 20*time.Millisecond, what, func() error {
		if ok, state := cond(); !ok {
			return fmt.Errorf("last state: %s", state)
		}
		return nil
	})
}

// stays checks that cond holds for d (a finalizer that must not go).
func stays(t *testing.T, what string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ok, state := cond(); !ok {
			t.Fatalf("%s: no longer true: %s", what, state)
		}
	}
}

func claim(name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

func podUsing(name, claimName, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}},
		},
	}
}

// A deleted claim goes once no scheduled pod uses it: at once without one,
// after the pod is deleted with one; an unscheduled pod does not hold it.
// (kube-controller-manager v1.37 pvcprotection; the finalizer is the
// StorageObjectInUseProtection admission plugin's.)
func TestClaimProtection(t *testing.T) {
	t.Parallel()
	cs := kubernetes.NewForConfigOrDie(kapitest.Start(t).Config)
	ctx := context.Background()
	ns := "default"
	claims, pods := cs.CoreV1().PersistentVolumeClaims(ns), cs.CoreV1().Pods(ns)
	gone := func(name string) func() (bool, string) {
		return func() (bool, string) {
			pvc, err := claims.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			return false, describe(pvc, err)
		}
	}
	terminating := func(name string) func() (bool, string) {
		return func() (bool, string) {
			pvc, err := claims.Get(ctx, name, metav1.GetOptions{})
			return err == nil && pvc.DeletionTimestamp != nil && slices.Contains(pvc.Finalizers, volumeprotection.PVCFinalizer), describe(pvc, err)
		}
	}

	// Unused: the finalizer is there on create and goes on delete.
	created, err := claims.Create(ctx, claim("free"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(created.Finalizers, volumeprotection.PVCFinalizer) {
		t.Fatalf("created claim's finalizers %v, want %s (admission)", created.Finalizers, volumeprotection.PVCFinalizer)
	}
	if err := claims.Delete(ctx, "free", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "unused claim deleted", gone("free"))

	// Used by a scheduled pod: kept until the pod is gone.
	if _, err := claims.Create(ctx, claim("held"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, podUsing("user", "held", "node-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Named by an unscheduled pod too, which must not hold it.
	if _, err := pods.Create(ctx, podUsing("pending", "held", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := claims.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	stays(t, "claim used by a scheduled pod kept", time.Second, terminating("held"))
	zero := int64(0)
	if err := pods.Delete(ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "claim deleted after its pod", gone("held"))

	// Not being deleted and without the finalizer (removed by a client):
	// the controller puts it back.
	if _, err := claims.Create(ctx, claim("bare"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "finalizer removed by a client", func() (bool, string) {
		pvc, err := claims.Get(ctx, "bare", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pvc.Finalizers = nil
		_, err = claims.Update(ctx, pvc, metav1.UpdateOptions{})
		return err == nil, describe(pvc, err)
	})
	eventually(t, "finalizer put back", func() (bool, string) {
		pvc, err := claims.Get(ctx, "bare", metav1.GetOptions{})
		return err == nil && slices.Contains(pvc.Finalizers, volumeprotection.PVCFinalizer), describe(pvc, err)
	})
}

// A bound claim carries the Unused condition: True while no running pod
// references it, False while one does (PersistentVolumeClaimUnusedSinceTime,
// beta and on in v1.37; reasons and messages from upstream's
// pvc_protection_controller.go).
func TestClaimUnusedCondition(t *testing.T) {
	t.Parallel()
	cs := kubernetes.NewForConfigOrDie(kapitest.Start(t).Config)
	ctx := context.Background()
	claims, pods := cs.CoreV1().PersistentVolumeClaims("default"), cs.CoreV1().Pods("default")
	unused := func(status corev1.ConditionStatus, reason, message string) func() (bool, string) {
		return func() (bool, string) {
			pvc, err := claims.Get(ctx, "bound", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, c := range pvc.Status.Conditions {
				if c.Type == corev1.PersistentVolumeClaimUnused {
					return c.Status == status && c.Reason == reason && c.Message == message && !c.LastTransitionTime.IsZero(), describe(pvc, nil)
				}
			}
			return false, describe(pvc, nil)
		}
	}
	pvc, err := claims.Create(ctx, claim("bound"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Pending claims get no condition.
	stays(t, "no Unused condition while pending", 300*time.Millisecond, func() (bool, string) {
		got, err := claims.Get(ctx, "bound", metav1.GetOptions{})
		return err == nil && len(got.Status.Conditions) == 0, describe(got, err)
	})
	pvc.Status.Phase = corev1.ClaimBound
	if _, err := claims.UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Unused=True once bound", unused(corev1.ConditionTrue, "NoPodsUsingPVC", "No pods are currently referencing this PVC"))
	// Written as kube-controller-manager writes it: its user agent's
	// first segment is the field manager.
	got, err := claims.Get(ctx, "bound", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, e := range got.ManagedFields {
		managers = append(managers, e.Manager+"/"+string(e.Operation)+"/"+e.Subresource)
	}
	if !slices.Contains(managers, "kube-controller-manager/Update/status") {
		t.Errorf("managed fields %v, want an entry kube-controller-manager/Update/status", managers)
	}
	// An unscheduled pod that has not terminated references it.
	if _, err := pods.Create(ctx, podUsing("reader", "bound", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Unused=False with a pod", unused(corev1.ConditionFalse, "PodUsingPVC", "A pod is currently referencing this PVC"))
	// A pod that succeeded no longer does.
	pod, err := pods.Get(ctx, "reader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Unused=True after the pod succeeded", unused(corev1.ConditionTrue, "NoPodsUsingPVC", "No pods are currently referencing this PVC"))
}

// A deleted volume goes unless its status is Bound (kube-controller-manager
// v1.37 pvprotection).
func TestVolumeProtection(t *testing.T) {
	t.Parallel()
	cs := kubernetes.NewForConfigOrDie(kapitest.Start(t).Config)
	ctx := context.Background()
	pvs := cs.CoreV1().PersistentVolumes()
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/pv1"}},
		},
	}
	created, err := pvs.Create(ctx, pv, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(created.Finalizers, volumeprotection.PVFinalizer) {
		t.Fatalf("created volume's finalizers %v, want %s (admission)", created.Finalizers, volumeprotection.PVFinalizer)
	}
	created.Status.Phase = corev1.VolumeBound
	if _, err := pvs.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvs.Delete(ctx, "pv1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	get := func() (*corev1.PersistentVolume, error) { return pvs.Get(ctx, "pv1", metav1.GetOptions{}) }
	stays(t, "bound volume kept", time.Second, func() (bool, string) {
		got, err := get()
		return err == nil && got.DeletionTimestamp != nil && slices.Contains(got.Finalizers, volumeprotection.PVFinalizer), describe(got, err)
	})
	got, err := get()
	if err != nil {
		t.Fatal(err)
	}
	got.Status.Phase = corev1.VolumeReleased
	if _, err := pvs.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "released volume deleted", func() (bool, string) {
		got, err := get()
		return apierrors.IsNotFound(err), describe(got, err)
	})
}

// A deleted VolumeAttributesClass goes once no claim or volume names it
// (kube-controller-manager v1.37 vacprotection).
func TestClassProtection(t *testing.T) {
	t.Parallel()
	cs := kubernetes.NewForConfigOrDie(kapitest.Start(t).Config)
	ctx := context.Background()
	classes := cs.StorageV1().VolumeAttributesClasses()
	created, err := classes.Create(ctx, &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: "fast"}, DriverName: "example.com/csi", Parameters: map[string]string{"iops": "1000"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(created.Finalizers, volumeprotection.VACFinalizer) {
		t.Fatalf("created class's finalizers %v, want %s (admission)", created.Finalizers, volumeprotection.VACFinalizer)
	}
	c := claim("user")
	c.Spec.VolumeAttributesClassName = ptr.To("fast")
	claims := cs.CoreV1().PersistentVolumeClaims("default")
	c, err = claims.Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The controller judges a deleted class by its claim informer alone
	// (as kube-controller-manager's vacprotection does), which may not
	// have the claim yet when the class is deleted: on CI's faster
	// machine the finalizer went (session 27). The claim's Unused
	// condition is written by the PVC protection controller from the
	// same shared informer once the claim is Bound: once it is there,
	// that informer holds the claim.
	c.Status.Phase = corev1.ClaimBound
	if _, err := claims.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the shared claim informer has the claim (its Unused condition)", func() (bool, string) {
		got, err := claims.Get(ctx, "user", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == corev1.PersistentVolumeClaimUnused {
				return true, ""
			}
		}
		return false, describe(got, nil)
	})
	if err := classes.Delete(ctx, "fast", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	get := func() (*storagev1.VolumeAttributesClass, error) { return classes.Get(ctx, "fast", metav1.GetOptions{}) }
	stays(t, "class named by a claim kept", time.Second, func() (bool, string) {
		got, err := get()
		return err == nil && got.DeletionTimestamp != nil && slices.Contains(got.Finalizers, volumeprotection.VACFinalizer), describe(got, err)
	})
	if err := claims.Delete(ctx, "user", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "class deleted after its claim", func() (bool, string) {
		got, err := get()
		return apierrors.IsNotFound(err), describe(got, err)
	})
}

// describe is an object's deletion state for failure messages.
func describe(obj metav1.Object, err error) string {
	if err != nil {
		return err.Error()
	}
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return "<nil>"
	}
	return "deletionTimestamp=" + timeString(obj.GetDeletionTimestamp()) + " finalizers=" + joinStrings(obj.GetFinalizers())
}

func timeString(t *metav1.Time) string {
	if t == nil {
		return "<nil>"
	}
	return t.UTC().Format(time.RFC3339)
}

func joinStrings(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out + "]"
}
