package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// runPods measures Pods with realistic specs (about 4 KiB each as stored):
// n creates and n gets at concurrency c, then full lists of all n (one
// request, and pages of -page), each -lists times, with their latency
// percentiles, and the server's resident and Go heap memory (from its
// /metrics) before and after.
func runPods(args []string) error {
	fs := flag.NewFlagSet("pods", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "kapi-data/admin.kubeconfig", "admin kubeconfig of the server")
	conc := fs.Int("c", 16, "concurrent workers")
	n := fs.Int("n", 10000, "pods")
	lists := fs.Int("lists", 10, "full lists of each kind")
	page := fs.Int64("page", 500, "page size of the paginated lists")
	_ = fs.Parse(args)
	ctx := context.Background()
	cs, err := clientFor(*kubeconfig)
	if err != nil {
		return err
	}
	before, err := serverMemory(ctx, cs)
	if err != nil {
		return err
	}
	ns, cleanup, err := tempNamespace(ctx, cs, "kapi-load-pods-")
	if err != nil {
		return err
	}
	defer cleanup()
	pods := cs.CoreV1().Pods(ns)
	name := func(i int) string { return "pod-" + strconv.Itoa(i) }

	sample, err := json.Marshal(realisticPod(ns, name(0)))
	if err != nil {
		return err
	}
	fmt.Printf("pod as sent: %d bytes of JSON\n", len(sample))
	ops := []op{
		{"create pod", func(i int) error {
			_, err := pods.Create(ctx, realisticPod(ns, name(i)), metav1.CreateOptions{})
			return err
		}},
		{"get pod", func(i int) error { _, err := pods.Get(ctx, name(i), metav1.GetOptions{}); return err }},
	}
	if err := runOps(ops, *conc, *n); err != nil {
		return err
	}
	stored, err := pods.Get(ctx, name(0), metav1.GetOptions{})
	if err != nil {
		return err
	}
	storedJSON, _ := json.Marshal(stored)
	fmt.Printf("pod as stored (defaulted): %d bytes of JSON\n", len(storedJSON))

	full := func() (int, error) {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}
	paged := func() (int, error) {
		total, cont := 0, ""
		for {
			l, err := pods.List(ctx, metav1.ListOptions{Limit: *page, Continue: cont})
			if err != nil {
				return 0, err
			}
			total += len(l.Items)
			if cont = l.Continue; cont == "" {
				return total, nil
			}
		}
	}
	cached := func() (int, error) {
		l, err := pods.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}
	for _, l := range []struct {
		what string
		do   func() (int, error)
	}{
		{"list all (consistent)", full},
		{fmt.Sprintf("list all in pages of %d", *page), paged},
		{"list all (resourceVersion=0)", cached},
	} {
		lat := make([]time.Duration, *lists)
		for i := range lat {
			t0 := time.Now()
			got, err := l.do()
			if err != nil {
				return fmt.Errorf("%s: %w", l.what, err)
			}
			if got != *n {
				return fmt.Errorf("%s: got %d pods, want %d", l.what, got, *n)
			}
			lat[i] = time.Since(t0)
		}
		sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
		fmt.Printf("%-28s of %d pods, %d times: p50 %v, max %v\n", l.what, *n, *lists, lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	}
	after, err := serverMemory(ctx, cs)
	if err != nil {
		return err
	}
	fmt.Printf("server memory: RSS %s -> %s, Go heap in use %s -> %s\n",
		mib(before["process_resident_memory_bytes"]), mib(after["process_resident_memory_bytes"]),
		mib(before["go_memstats_heap_inuse_bytes"]), mib(after["go_memstats_heap_inuse_bytes"]))
	return nil
}

func mib(v float64) string { return fmt.Sprintf("%.0f MiB", v/(1<<20)) }

// serverMemory reads the server's memory gauges from its /metrics.
func serverMemory(ctx context.Context, cs *kubernetes.Clientset) (map[string]float64, error) {
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	want := map[string]bool{"process_resident_memory_bytes": true, "go_memstats_heap_inuse_bytes": true}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", name, err)
		}
		out[name] = v
	}
	if len(out) != len(want) {
		return nil, fmt.Errorf("/metrics lacks %v (got %v)", want, out)
	}
	return out, sc.Err()
}

// realisticPod is a Pod as a Deployment's template would make it: an
// application container and a sidecar, with env, resources, probes,
// mounts, and the labels and annotations tools add.
func realisticPod(ns, name string) *corev1.Pod {
	env := make([]corev1.EnvVar, 0, 12)
	for i := range 10 {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("APP_SETTING_%02d", i), Value: fmt.Sprintf("value-%02d-for-the-application", i)})
	}
	env = append(env,
		corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
	)
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}}, PeriodSeconds: 10}
	}
	res := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)},
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: ns,
			Labels: map[string]string{
				"app.kubernetes.io/name": "shop-frontend", "app.kubernetes.io/instance": "shop-frontend-prod",
				"app.kubernetes.io/version": "2.14.3", "app.kubernetes.io/component": "web",
				"app.kubernetes.io/part-of": "shop", "pod-template-hash": "7d9f8c6b5d",
			},
			Annotations: map[string]string{
				"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
				"kubectl.kubernetes.io/restartedAt": "2026-11-20T10:11:12Z",
				"checksum/config":                   "8f14e45fceea167a5a36dedd4bea2543a1b6c7d8e9f0a1b2c3d4e5f60718293a",
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "frontend",
				Image: "registry.example.com/shop/frontend:2.14.3",
				Args:  []string{"--listen=:8080", "--metrics=:9090", "--log-level=info", "--config=/etc/shop/config.yaml"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
				Env:   env,
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shop-frontend-env"}}},
				},
				Resources:      res("250m", "512Mi"),
				LivenessProbe:  probe("/healthz"),
				ReadinessProbe: probe("/readyz"),
				VolumeMounts: []corev1.VolumeMount{
					{Name: "config", MountPath: "/etc/shop", ReadOnly: true},
					{Name: "cache", MountPath: "/var/cache/shop"},
				},
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot: ptr(true), AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}, {
				Name:      "log-shipper",
				Image:     "registry.example.com/infra/log-shipper:1.9.0",
				Args:      []string{"--input=/var/log/shop", "--output=tcp://logs.example.com:5170"},
				Resources: res("50m", "64Mi"),
				VolumeMounts: []corev1.VolumeMount{
					{Name: "cache", MountPath: "/var/log/shop", SubPath: "logs"},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shop-frontend-config"}}}},
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("1Gi"))}}},
			},
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
					Weight: 100,
					PodAffinityTerm: corev1.PodAffinityTerm{
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "shop-frontend"}},
						TopologyKey:   "kubernetes.io/hostname",
					},
				}},
			}},
		},
	}
}

func ptr[T any](v T) *T { return &v }
