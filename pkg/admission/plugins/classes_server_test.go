package plugins_test

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestClassPluginsOnServer: the default-on PersistentVolumeClaimResize,
// RuntimeClass and DefaultIngressClass plugins on a real server, with
// upstream's messages (plugin/pkg/admission/storage/persistentvolume/
// resize, runtimeclass, network/defaultingressclass v1.37).
func TestClassPluginsOnServer(t *testing.T) {
	s := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()

	t.Run("PersistentVolumeClaimResize", func(t *testing.T) {
		for _, sc := range []*storagev1.StorageClass{
			{ObjectMeta: metav1.ObjectMeta{Name: "grows"}, Provisioner: "example.com/x", AllowVolumeExpansion: ptr.To(true)},
			{ObjectMeta: metav1.ObjectMeta{Name: "fixed"}, Provisioner: "example.com/x"},
		} {
			if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		pvcs := cs.CoreV1().PersistentVolumeClaims("default")
		// An unbound claim's spec is immutable: validation refuses its
		// growth before this plugin runs (as upstream; the plugin's own
		// refusal is in pvcresize's unit test).
		claim := func(name, class string, bound bool) *corev1.PersistentVolumeClaim {
			pvc, err := pvcs.Create(ctx, &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: corev1.PersistentVolumeClaimSpec{
					StorageClassName: ptr.To(class), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if bound {
				pvc.Status.Phase = corev1.ClaimBound
				if pvc, err = pvcs.UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			return pvc
		}
		// grow updates the latest copy: the pvc-protection controller
		// gives bound claims their Unused condition meanwhile.
		grow := func(pvc *corev1.PersistentVolumeClaim) error {
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := pvcs.Get(ctx, pvc.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				cur.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
				_, err = pvcs.Update(ctx, cur, metav1.UpdateOptions{})
				return err
			})
		}
		if err := grow(claim("ok", "grows", true)); err != nil {
			t.Errorf("bound claim of an expandable class: %v", err)
		}
		for _, c := range []struct {
			pvc  *corev1.PersistentVolumeClaim
			want string
		}{
			{claim("fixed", "fixed", true), `persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`},
			{claim("missing", "nosuchclass", true), `persistentvolumeclaims "missing" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`},
		} {
			if err := grow(c.pvc); err == nil || err.Error() != c.want || !apierrors.IsForbidden(err) {
				t.Errorf("grow %s: %v, want 403 %q", c.pvc.Name, err, c.want)
			}
		}
	})

	t.Run("RuntimeClass", func(t *testing.T) {
		if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: "sandboxed"}, Handler: "runsc",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
			Scheduling: &nodev1.Scheduling{
				NodeSelector: map[string]string{"sandbox": "true"},
				Tolerations:  []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := func(name, class string, mutate func(*corev1.Pod)) *corev1.Pod {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
				RuntimeClassName: ptr.To(class), Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			}}
			if mutate != nil {
				mutate(p)
			}
			return p
		}
		got, err := createPod(ctx, cs, "default", pod("sandboxed", "sandboxed", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }))
		if err != nil {
			t.Fatal(err)
		}
		wantOverhead := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
		if got.Spec.Overhead.Cpu().Cmp(wantOverhead[corev1.ResourceCPU]) != 0 || got.Spec.Overhead.Memory().Cmp(wantOverhead[corev1.ResourceMemory]) != 0 {
			t.Errorf("overhead %v, want %v", got.Spec.Overhead, wantOverhead)
		}
		if want := map[string]string{"zone": "a", "sandbox": "true"}; !reflect.DeepEqual(got.Spec.NodeSelector, want) {
			t.Errorf("node selector %v, want %v", got.Spec.NodeSelector, want)
		}
		var sandboxToleration bool
		for _, tol := range got.Spec.Tolerations {
			sandboxToleration = sandboxToleration || (tol.Key == "sandbox" && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule)
		}
		if !sandboxToleration {
			t.Errorf("tolerations %v, want the RuntimeClass's", got.Spec.Tolerations)
		}
		for _, c := range []struct {
			pod  *corev1.Pod
			want string
		}{
			{pod("nosuch", "nosuch", nil), `pods "nosuch" is forbidden: pod rejected: RuntimeClass "nosuch" not found`},
			{pod("conflict", "sandboxed", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"sandbox": "false"} }),
				`pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false`},
			{pod("overhead", "sandboxed", func(p *corev1.Pod) {
				p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
			}),
				`pods "overhead" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`},
		} {
			if _, err := createPod(ctx, cs, "default", c.pod); err == nil || err.Error() != c.want || !apierrors.IsForbidden(err) {
				t.Errorf("pod %s: %v, want 403 %q", c.pod.Name, err, c.want)
			}
		}
	})

	t.Run("DefaultIngressClass", func(t *testing.T) {
		ing := func(name string, mutate func(*networkingv1.Ingress)) *networkingv1.Ingress {
			i := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IngressSpec{
				DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}
			if mutate != nil {
				mutate(i)
			}
			got, err := cs.NetworkingV1().Ingresses("default").Create(ctx, i, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if got := ing("before", nil); got.Spec.IngressClassName != nil {
			t.Errorf("class %q set without a default class", *got.Spec.IngressClassName)
		}
		if _, err := cs.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{
			ObjectMeta: metav1.ObjectMeta{Name: "nginx", Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}},
			Spec:       networkingv1.IngressClassSpec{Controller: "example.com/ingress"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := ing("defaulted", nil); got.Spec.IngressClassName == nil || *got.Spec.IngressClassName != "nginx" {
			t.Errorf("class %v, want the default nginx", got.Spec.IngressClassName)
		}
		if got := ing("annotated", func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": "other"}
		}); got.Spec.IngressClassName != nil {
			t.Errorf("class %q set on an ingress with the class annotation", *got.Spec.IngressClassName)
		}
	})
}
