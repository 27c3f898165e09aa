package plugins_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestDefaultPluginsOnServer runs the default plugin set on a real server
// (the controllers create each namespace's default service account) and
// checks what each built-in plugin does to what is stored.
func TestDefaultPluginsOnServer(t *testing.T) {
	s := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	ns := "adm"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("ServiceAccount and DefaultTolerationSeconds", func(t *testing.T) {
		pod, err := createPod(ctx, cs, ns, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.ServiceAccountName != "default" {
			t.Errorf("serviceAccountName %q, want default", pod.Spec.ServiceAccountName)
		}
		if len(pod.Spec.Volumes) != 1 || !strings.HasPrefix(pod.Spec.Volumes[0].Name, "kube-api-access-") || len(pod.Spec.Volumes[0].Name) != len("kube-api-access-")+5 {
			t.Fatalf("volumes %+v", pod.Spec.Volumes)
		}
		if m := pod.Spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" || !m[0].ReadOnly {
			t.Errorf("mounts %+v", m)
		}
		var keys []string
		for _, tol := range pod.Spec.Tolerations {
			if tol.TolerationSeconds == nil || *tol.TolerationSeconds != 300 || tol.Effect != corev1.TaintEffectNoExecute {
				t.Errorf("toleration %+v", tol)
			}
			keys = append(keys, tol.Key)
		}
		if strings.Join(keys, ",") != "node.kubernetes.io/not-ready,node.kubernetes.io/unreachable" {
			t.Errorf("tolerations %v", keys)
		}
		_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.PodSpec{
			ServiceAccountName: "missing", Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || err.Error() != `pods "q" is forbidden: error looking up service account adm/missing: serviceaccount "missing" not found` {
			t.Errorf("missing account: got %v", err)
		}
	})

	t.Run("LimitRanger", func(t *testing.T) {
		_, err := cs.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{
			Limits: []corev1.LimitRangeItem{{
				Type:           corev1.LimitTypeContainer,
				Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Max:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.CoreV1().LimitRanges(ns).Delete(ctx, "lr", metav1.DeleteOptions{})
		pod, err := createPod(ctx, cs, ns, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		r := pod.Spec.Containers[0].Resources
		if r.Requests.Cpu().String() != "100m" || r.Limits.Cpu().String() != "500m" {
			t.Errorf("resources %+v", r)
		}
		if got := pod.Annotations["kubernetes.io/limit-ranger"]; got != "LimitRanger plugin set: cpu request for container c; cpu limit for container c" {
			t.Errorf("annotation %q", got)
		}
		_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			}}},
		}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || err.Error() != `pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2` {
			t.Errorf("over max: got %v", err)
		}
	})

	t.Run("TaintNodesByCondition", func(t *testing.T) {
		n, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "node.kubernetes.io/not-ready" || n.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule {
			t.Errorf("taints %+v", n.Spec.Taints)
		}
	})

	t.Run("StorageObjectInUseProtection", func(t *testing.T) {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(pvc.Finalizers, ",") != "kubernetes.io/pvc-protection" {
			t.Errorf("pvc finalizers %v", pvc.Finalizers)
		}
		pv, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "v"}, Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/x"}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(pv.Finalizers, ",") != "kubernetes.io/pv-protection" {
			t.Errorf("pv finalizers %v", pv.Finalizers)
		}
	})
}

// createPod creates a pod, retrying while the namespace's default service
// account is not there yet (its controller creates it just after the
// namespace, as upstream's; the plugin itself waits up to ~2s).
func createPod(ctx context.Context, cs kubernetes.Interface, ns string, pod *corev1.Pod) (*corev1.Pod, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "error looking up service account") || time.Now().After(deadline) {
			return got, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAdmissionFlags checks the flags on a real server: a disabled plugin
// does not run, an enabled one does, unknown names stop the start.
func TestAdmissionFlags(t *testing.T) {
	s := kapitest.Start(t, kapitest.WithFlags("--disable-admission-plugins=ServiceAccount,DefaultTolerationSeconds,TaintNodesByCondition",
		"--enable-admission-plugins=AlwaysPullImages"))
	cs := kubernetes.NewForConfigOrDie(s.Config)
	ctx := context.Background()
	// No service account is needed (ServiceAccount is off), no toleration
	// is added.
	pod, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		ServiceAccountName: "nobody", Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Volumes) != 0 || len(pod.Spec.Tolerations) != 0 {
		t.Errorf("disabled plugins ran: volumes %+v tolerations %+v", pod.Spec.Volumes, pod.Spec.Tolerations)
	}
	n, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Spec.Taints) != 0 {
		t.Errorf("TaintNodesByCondition ran: %+v", n.Spec.Taints)
	}

	dir := t.TempDir()
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--enable-admission-plugins=Bogus"}, `enable-admission-plugins plugin "Bogus" is unknown`},
		{[]string{"--disable-admission-plugins=Nope"}, `disable-admission-plugins plugin "Nope" is unknown`},
		{[]string{"--admission-control-config-file=" + filepath.Join(dir, "absent.yaml")}, "unable to read admission control configuration"},
	} {
		_, err := kapitest.StartE(t.TempDir(), nil, kapitest.WithFlags(tc.flags...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.flags, err, tc.want)
		}
	}
	cfg := filepath.Join(dir, "admission.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := kapitest.StartE(t.TempDir(), nil, kapitest.WithFlags("--admission-control-config-file="+cfg))
	if err != nil {
		t.Fatalf("valid configuration file refused: %v", err)
	}
	_ = s2.Stop()
}
