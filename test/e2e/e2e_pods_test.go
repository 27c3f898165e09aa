package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubectlPods drives pods and pod templates with the real kubectl 1.27
// and 1.33 on both backends: run, get -o wide, explain, logs and exec of
// a pod without a kubelet, field selectors, graceful and forced deletion,
// and apply (client-side and server-side) of pod templates whose new
// containers get the server's defaults.
func TestKubectlPods(t *testing.T) {
	binaries := kubectlPair(t)
	cases := []struct {
		name string
		fn   func(t *testing.T, e *env, k *kc)
	}{
		{"run-and-get", testKubectlRunPod},
		{"explain", testKubectlExplainPod},
		{"delete", testKubectlDeletePods},
		{"podtemplates", testKubectlPodTemplates},
	}
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bin := range binaries {
			t.Run(filepath.Base(bin), func(t *testing.T) {
				for _, c := range cases {
					t.Run(c.name, func(t *testing.T) {
						t.Parallel()
						c.fn(t, e, newKC(t, e, bin))
					})
				}
			})
		}
	})
}

var spaces = regexp.MustCompile(`\s{2,}`)

// columns splits kubectl's table output into lines of cells.
func columns(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		rows = append(rows, spaces.Split(strings.TrimSpace(line), -1))
	}
	return rows
}

func testKubectlRunPod(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	k.ok(t, "-n", ns, "run", "web", "--image=nginx", "--port=80", "--labels=app=web")
	pod, err := k.cs.CoreV1().Pods(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	// kube-apiserver's defaults (pkg/apis/core/v1/defaults.go) and
	// PrepareForCreate.
	if c.ImagePullPolicy != corev1.PullAlways || c.TerminationMessagePath != "/dev/termination-log" || c.Ports[0].Protocol != corev1.ProtocolTCP ||
		pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || pod.Spec.SchedulerName != "default-scheduler" ||
		pod.Status.Phase != corev1.PodPending || pod.Status.QOSClass != corev1.PodQOSBestEffort || pod.Generation != 1 {
		t.Errorf("kubectl run: got pod %+v", pod)
	}

	// NAME READY STATUS RESTARTS AGE, and the -o wide columns (printPod).
	rows := columns(k.ok(t, "-n", ns, "get", "pods", "-o", "wide"))
	wantHeader := []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"}
	if len(rows) != 2 || !slices.Equal(rows[0], wantHeader) {
		t.Fatalf("get pods -o wide: got %q", rows)
	}
	if r := rows[1]; len(r) != 9 || r[0] != "web" || r[1] != "0/1" || r[2] != "Pending" || r[3] != "0" ||
		!slices.Equal(r[5:], []string{"<none>", "<none>", "<none>", "<none>"}) {
		t.Errorf("get pods -o wide: got row %q", r)
	}
	if rows := columns(k.ok(t, "-n", ns, "get", "pods")); !slices.Equal(rows[0], wantHeader[:5]) {
		t.Errorf("get pods: got header %q", rows[0])
	}

	// Field selectors (including the old spec.host) and label selectors.
	if out := k.ok(t, "-n", ns, "get", "pods", "-o", "name", "--field-selector", "status.phase=Pending,spec.nodeName="); out != "pod/web\n" {
		t.Errorf("field selector: got %q", out)
	}
	if out := k.ok(t, "-n", ns, "get", "pods", "-o", "name", "--field-selector", "spec.host=node-1"); out != "" {
		t.Errorf("spec.host selector: got %q", out)
	}
	if r := k.run(t, "", nil, "-n", ns, "get", "pods", "--field-selector", "spec.containers=x"); r.code == 0 || !strings.Contains(r.stderr, "field label not supported: spec.containers") {
		t.Errorf("unsupported field selector: got %s", r)
	}

	// Without a kubelet: no logs (204), no exec (400).
	if r := k.run(t, "", nil, "-n", ns, "logs", "web"); r.code != 0 || r.stdout != "" {
		t.Errorf("logs of a pod without a node: got %s", r)
	}
	if r := k.run(t, "", nil, "-n", ns, "exec", "web", "--", "true"); r.code == 0 || !strings.Contains(r.stderr, "pod web does not have a host assigned") {
		t.Errorf("exec into a pod without a node: got %s", r)
	}

	// Images may change; the rest of the spec may not.
	k.ok(t, "-n", ns, "set", "image", "pod/web", "web=nginx:1.26")
	r := k.run(t, "", nil, "-n", ns, "patch", "pod", "web", "-p", `{"spec":{"restartPolicy":"Never"}}`)
	if r.code == 0 || !strings.Contains(r.stderr, "pod updates may not change fields other than `spec.containers[*].image`") {
		t.Errorf("patching the restart policy: got %s", r)
	}
	pod, err = k.cs.CoreV1().Pods(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil || pod.Spec.Containers[0].Image != "nginx:1.26" || pod.Generation != 2 {
		t.Errorf("after set image: got %v, %v", pod, err)
	}
}

func testKubectlExplainPod(t *testing.T, _ *env, k *kc) {
	out := k.ok(t, "explain", "pod")
	if !strings.Contains(out, "KIND:") || !strings.Contains(out, "Pod") || !strings.Contains(out, "VERSION:") {
		t.Errorf("explain pod: got %q", out)
	}
	out = k.ok(t, "explain", "pods.spec.containers.imagePullPolicy")
	if !strings.Contains(out, "imagePullPolicy") || !strings.Contains(out, "IfNotPresent") {
		t.Errorf("explain pods.spec.containers.imagePullPolicy: got %q", out)
	}
	if out := k.ok(t, "explain", "podtemplates.template"); !strings.Contains(out, "PodTemplate") {
		t.Errorf("explain podtemplates.template: got %q", out)
	}
}

func testKubectlDeletePods(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	ctx := context.Background()
	k.ok(t, "-n", ns, "run", "pending", "--image=busybox")
	k.ok(t, "-n", ns, "run", "scheduled", "--image=busybox")
	// The scheduler's write: a binding.
	if err := k.cs.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "scheduled"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A pod without a node goes at once (kubectl waits for it).
	start := time.Now()
	k.ok(t, "-n", ns, "delete", "pod", "pending")
	if _, err := k.cs.CoreV1().Pods(ns).Get(ctx, "pending", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: got %v, want NotFound", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("deleting an unscheduled pod took %v", d)
	}

	// A scheduled pod waits for its kubelet: Terminating with its grace
	// period, until deleted with none.
	k.ok(t, "-n", ns, "delete", "pod", "scheduled", "--wait=false")
	pod, err := k.cs.CoreV1().Pods(ns).Get(ctx, "scheduled", metav1.GetOptions{})
	if err != nil || pod.DeletionTimestamp == nil || pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("after a graceful delete: got %v, %v", pod, err)
	}
	rows := columns(k.ok(t, "-n", ns, "get", "pod", "scheduled"))
	if len(rows) != 2 || rows[1][2] != "Terminating" {
		t.Errorf("get a terminating pod: got %q", rows)
	}
	r := k.run(t, "", nil, "-n", ns, "delete", "pod", "scheduled", "--grace-period=0", "--force")
	if r.code != 0 || !strings.Contains(r.stdout, `pod "scheduled" force deleted`) {
		t.Errorf("force delete: got %s", r)
	}
	if _, err := k.cs.CoreV1().Pods(ns).Get(ctx, "scheduled", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a forced delete: got %v, want NotFound", err)
	}
}

func testKubectlPodTemplates(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	manifest := `apiVersion: v1
kind: PodTemplate
metadata:
  name: web
template:
  metadata:
    labels: {app: web}
  spec:
    containers:
    - name: web
      image: nginx:1.25
`
	k.apply(t, ns, manifest)
	// Client-side apply again with a container added: a strategic merge
	// patch, whose new container is defaulted as decoding would.
	k.apply(t, ns, manifest+`    - name: log
      image: fluentd
      ports:
      - containerPort: 24224
`)
	pt, err := k.cs.CoreV1().PodTemplates(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cs := pt.Template.Spec.Containers; len(cs) != 2 || cs[1].ImagePullPolicy != corev1.PullAlways || cs[1].Ports[0].Protocol != corev1.ProtocolTCP ||
		cs[1].TerminationMessagePolicy != corev1.TerminationMessageReadFile || pt.Generation != 2 {
		t.Errorf("after apply: got %+v (generation %d)", pt.Template.Spec.Containers, pt.Generation)
	}
	// Server-side apply defaults too.
	k.apply(t, ns, strings.Replace(manifest, "name: web\ntemplate", "name: ssa\ntemplate", 1), "--server-side")
	ssa, err := k.cs.CoreV1().PodTemplates(ns).Get(context.Background(), "ssa", metav1.GetOptions{})
	if err != nil || ssa.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent || ssa.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("server-side apply: got %v, %v", ssa, err)
	}
	rows := columns(k.ok(t, "-n", ns, "get", "podtemplates"))
	if len(rows) != 3 || !slices.Equal(rows[0], []string{"NAME", "CONTAINERS", "IMAGES", "POD LABELS"}) ||
		!slices.Equal(rows[2], []string{"web", "web,log", "nginx:1.25,fluentd", "app=web"}) {
		t.Errorf("get podtemplates: got %q", rows)
	}
	// A template is validated as a pod spec.
	r := k.run(t, strings.Replace(manifest, "image: nginx:1.25", "image: \"\"", 1), nil, "-n", ns, "create", "-f", "-")
	if r.code == 0 || !strings.Contains(r.stderr, "template.spec.containers[0].image: Required value") {
		t.Errorf("create an invalid template: got %s", r)
	}
}
