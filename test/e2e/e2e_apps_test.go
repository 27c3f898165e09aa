package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestKubectlApps drives the apps/v1 kubectl flows with the real kubectl
// 1.27 and 1.33, on the memory backend and on embedded etcd: create
// deployment, scale, rollout history/pause/resume/restart, set image,
// expose deployment, get -o wide, explain, and apply of a multi-document
// manifest. No controller acts on these objects (as on a kube-apiserver
// started alone): the tests check what the server stores and prints.
func TestKubectlApps(t *testing.T) {
	binaries := kubectlPair(t)
	cases := []struct {
		name string
		fn   func(t *testing.T, e *env, k *kc)
	}{
		{"create-scale-set-image", testKubectlAppsDeployment},
		{"rollout", testKubectlAppsRollout},
		{"expose", testKubectlAppsExpose},
		{"autoscale", testKubectlAppsAutoscale},
		{"apply-multi-document", testKubectlAppsApply},
		{"get-wide", testKubectlAppsTables},
		{"explain", testKubectlAppsExplain},
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

func (k *kc) deployment(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	d, err := k.cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get deployment %s/%s: %v", ns, name, err)
	}
	return d
}

// testKubectlAppsDeployment: create deployment (stored with upstream's
// defaults, template included), scale (with and without a precondition),
// set image; the generation follows each spec change.
func testKubectlAppsDeployment(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	if out := k.ok(t, "-n", ns, "create", "deployment", "web", "--image=nginx:1.25", "--replicas=2"); out != "deployment.apps/web created\n" {
		t.Errorf("create deployment: got %q", out)
	}
	d := k.deployment(t, ns, "web")
	c := d.Spec.Template.Spec.Containers[0]
	quarter := intstr.FromString("25%")
	switch {
	case *d.Spec.Replicas != 2 || d.Generation != 1:
		t.Errorf("got replicas %d generation %d, want 2 and 1", *d.Spec.Replicas, d.Generation)
	case d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || *d.Spec.Strategy.RollingUpdate.MaxSurge != quarter:
		t.Errorf("got strategy %+v, want RollingUpdate 25%%", d.Spec.Strategy)
	case *d.Spec.RevisionHistoryLimit != 10 || *d.Spec.ProgressDeadlineSeconds != 600:
		t.Errorf("got revisionHistoryLimit %d progressDeadlineSeconds %d, want 10 and 600", *d.Spec.RevisionHistoryLimit, *d.Spec.ProgressDeadlineSeconds)
	case d.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || c.ImagePullPolicy != corev1.PullIfNotPresent ||
		c.TerminationMessagePath != corev1.TerminationMessagePathDefault || d.Spec.Template.Spec.SchedulerName != corev1.DefaultSchedulerName:
		t.Errorf("got template %+v, want the pod defaults", d.Spec.Template.Spec)
	case d.Spec.Selector.MatchLabels["app"] != "web" || d.Spec.Template.Labels["app"] != "web" || c.Name != "nginx":
		t.Errorf("got selector %v, template labels %v, container %s; want app=web and kubectl's container name nginx",
			d.Spec.Selector, d.Spec.Template.Labels, c.Name)
	}

	if out := k.ok(t, "-n", ns, "scale", "deployment", "web", "--replicas=5"); out != "deployment.apps/web scaled\n" {
		t.Errorf("scale: got %q", out)
	}
	if d = k.deployment(t, ns, "web"); *d.Spec.Replicas != 5 || d.Generation != 2 {
		t.Errorf("after scale got replicas %d generation %d, want 5 and 2", *d.Spec.Replicas, d.Generation)
	}
	// A precondition that does not hold fails without a change.
	r := k.run(t, "", nil, "-n", ns, "scale", "deployment", "web", "--current-replicas=3", "--replicas=1")
	if r.code == 0 || !strings.Contains(r.stderr, "Expected replicas to be 3, was 5") {
		t.Errorf("scale with a wrong --current-replicas: %s", r)
	}
	k.ok(t, "-n", ns, "scale", "deployment", "web", "--current-replicas=5", "--replicas=1")
	if d = k.deployment(t, ns, "web"); *d.Spec.Replicas != 1 {
		t.Errorf("got replicas %d after scaling from 5 to 1", *d.Spec.Replicas)
	}
	if out := k.ok(t, "-n", ns, "get", "deployment", "web", "--subresource=scale"); !strings.HasPrefix(out, "NAME   DESIRED   AVAILABLE   AGE\nweb    1         0  ") {
		t.Errorf("get --subresource=scale: got %q, want upstream's Scale table", out)
	}

	if out := k.ok(t, "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.26"); out != "deployment.apps/web image updated\n" {
		t.Errorf("set image: got %q", out)
	}
	if d = k.deployment(t, ns, "web"); d.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" || d.Generation != 4 {
		t.Errorf("after set image got image %s generation %d, want nginx:1.26 and 4", d.Spec.Template.Spec.Containers[0].Image, d.Generation)
	}
	r = k.run(t, "", nil, "-n", ns, "set", "image", "deployment/web", "nosuch=x")
	if r.code == 0 || !strings.Contains(r.stderr, `unable to find container named "nosuch"`) {
		t.Errorf("set image of a missing container: %s", r)
	}

	// An invalid deployment: upstream's message, as kubectl prints it.
	r = k.run(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: -1
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: other}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: nginx}]
`, nil, "-n", ns, "apply", "-f", "-")
	want := `The Deployment "bad" is invalid: ` + "\n" +
		`* spec.replicas: Invalid value: -1: must be greater than or equal to 0` + "\n" +
		`* spec.template.metadata.labels: Invalid value: {"app":"other"}: ` + "`selector` does not match template `labels`" + "\n" +
		`* spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("apply an invalid deployment: %s\nwant stderr containing\n%s", r, want)
	}

	// Statefulsets and replicasets scale too (kubectl's scale client).
	k.apply(t, ns, appsManifest(ns))
	k.ok(t, "-n", ns, "scale", "statefulset", "db", "--replicas=3")
	k.ok(t, "-n", ns, "scale", "replicaset", "rs", "--replicas=0")
	ss, err := k.cs.AppsV1().StatefulSets(ns).Get(context.Background(), "db", metav1.GetOptions{})
	if err != nil || *ss.Spec.Replicas != 3 {
		t.Errorf("statefulset after scale: %v %v", err, ss)
	}
	rs, err := k.cs.AppsV1().ReplicaSets(ns).Get(context.Background(), "rs", metav1.GetOptions{})
	if err != nil || *rs.Spec.Replicas != 0 {
		t.Errorf("replicaset after scale: %v %v", err, rs)
	}
	r = k.run(t, "", nil, "-n", ns, "scale", "daemonset", "agent", "--replicas=2")
	if r.code == 0 {
		t.Errorf("scale daemonset succeeded, want a failure (no scale subresource): %s", r)
	}
}

// appsManifest is a multi-document manifest with one object of each
// workload kind (and a replicaset), named after ns in labels.
func appsManifest(ns string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: api, labels: {suite: %[1]q}}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "registry.example.com/api:1", ports: [{containerPort: 8080}]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, labels: {suite: %[1]q}}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: pg, image: "postgres:16"}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, labels: {suite: %[1]q}}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: agent, image: "busybox:1.36"}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, labels: {suite: %[1]q}}
spec:
  replicas: 1
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}
    spec:
      containers: [{name: c, image: "busybox:1.36"}]
`, ns)
}

// testKubectlAppsApply: a multi-document manifest is created, applied
// again unchanged, then changed; each object keeps its defaults.
func testKubectlAppsApply(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	manifest := appsManifest(ns)
	want := "deployment.apps/api created\nstatefulset.apps/db created\ndaemonset.apps/agent created\nreplicaset.apps/rs created\n"
	if out := k.apply(t, ns, manifest); out != want {
		t.Errorf("apply: got\n%s\nwant\n%s", out, want)
	}
	// A statefulset with volumeClaimTemplates is "configured" on every
	// client-side apply, as on kube-apiserver (kubernetes/kubernetes#66450:
	// the claim templates, a list without a merge key, differ from the
	// stored ones by their defaults, so kubectl sends them again; the
	// object does not change).
	want = "deployment.apps/api unchanged\nstatefulset.apps/db configured\ndaemonset.apps/agent unchanged\nreplicaset.apps/rs unchanged\n"
	if out := k.apply(t, ns, manifest); out != want {
		t.Errorf("apply again: got\n%s\nwant\n%s", out, want)
	}
	changed := strings.ReplaceAll(manifest, "busybox:1.36", "busybox:1.37")
	want = "deployment.apps/api unchanged\nstatefulset.apps/db configured\ndaemonset.apps/agent configured\nreplicaset.apps/rs configured\n"
	if out := k.apply(t, ns, changed); out != want {
		t.Errorf("apply a change: got\n%s\nwant\n%s", out, want)
	}
	ctx := context.Background()
	ds, err := k.cs.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Spec.Template.Spec.Containers[0].Image != "busybox:1.37" || ds.Generation != 2 ||
		ds.Annotations[appsv1.DeprecatedTemplateGeneration] != "2" || ds.Spec.UpdateStrategy.RollingUpdate == nil {
		t.Errorf("daemonset after apply: got %+v", ds)
	}
	ss, err := k.cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ss.Generation != 1 {
		t.Errorf("got statefulset generation %d after re-applying it unchanged, want 1", ss.Generation)
	}
	vct := ss.Spec.VolumeClaimTemplates[0]
	if ss.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement || vct.Status.Phase != corev1.ClaimPending ||
		vct.Spec.VolumeMode == nil || *vct.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("statefulset after apply: got %+v", ss.Spec)
	}

	// Server-side apply of the same manifest, by another manager.
	out := k.ok(t, "-n", ns, "apply", "--server-side", "--field-manager=ssa", "--force-conflicts", "-f", writeFile(t, k.dir, "m.yaml", changed))
	if !strings.Contains(out, "deployment.apps/api serverside-applied") || !strings.Contains(out, "daemonset.apps/agent serverside-applied") {
		t.Errorf("apply --server-side: got %q", out)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// testKubectlAppsRollout: rollout pause, resume and restart change the
// deployment (no controller rolls pods); rollout history lists what the
// server holds: no replicasets for the deployment, and the
// controllerrevisions a statefulset and a daemonset own.
func testKubectlAppsRollout(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	k.ok(t, "-n", ns, "create", "deployment", "web", "--image=nginx:1.25")
	if out := k.ok(t, "-n", ns, "rollout", "pause", "deployment/web"); out != "deployment.apps/web paused\n" {
		t.Errorf("rollout pause: got %q", out)
	}
	if d := k.deployment(t, ns, "web"); !d.Spec.Paused || d.Generation != 2 {
		t.Errorf("after pause got paused %t generation %d, want true and 2", d.Spec.Paused, d.Generation)
	}
	r := k.run(t, "", nil, "-n", ns, "rollout", "pause", "deployment/web")
	if r.code == 0 || !strings.Contains(r.stderr, "already paused") {
		t.Errorf("pausing again: %s", r)
	}
	if out := k.ok(t, "-n", ns, "rollout", "resume", "deployment/web"); out != "deployment.apps/web resumed\n" {
		t.Errorf("rollout resume: got %q", out)
	}
	if out := k.ok(t, "-n", ns, "rollout", "restart", "deployment/web"); out != "deployment.apps/web restarted\n" {
		t.Errorf("rollout restart: got %q", out)
	}
	d := k.deployment(t, ns, "web")
	if d.Spec.Paused || d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" || d.Generation != 4 {
		t.Errorf("after resume and restart got paused %t, template annotations %v, generation %d; want false, restartedAt, 4",
			d.Spec.Paused, d.Spec.Template.Annotations, d.Generation)
	}
	if out := k.ok(t, "-n", ns, "rollout", "history", "deployment/web"); !strings.Contains(out, "No rollout history found.") {
		t.Errorf("rollout history deployment: got %q", out)
	}

	// A statefulset and a daemonset with the revisions their controllers
	// would have written: rollout history reads them.
	k.apply(t, ns, appsManifest(ns))
	ctx := context.Background()
	ss, err := k.cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := k.cs.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	for i, owner := range []metav1.Object{ss, ss, ds} {
		kind, labels := "StatefulSet", ss.Spec.Template.Labels
		if owner == metav1.Object(ds) {
			kind, labels = "DaemonSet", ds.Spec.Template.Labels
		}
		rev := &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{
				Name:   fmt.Sprintf("%s-rev%d", owner.GetName(), i),
				Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(),
					UID: owner.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}},
				Annotations: map[string]string{"kubernetes.io/change-cause": fmt.Sprintf("change %d", i)},
			},
			Data:     runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace"}}}`)},
			Revision: int64(i + 1),
		}
		if _, err := k.cs.AppsV1().ControllerRevisions(ns).Create(ctx, rev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	out := k.ok(t, "-n", ns, "rollout", "history", "statefulset/db")
	if !strings.HasPrefix(out, "statefulset.apps/db") || !strings.Contains(out, "REVISION  CHANGE-CAUSE\n1         change 0\n2         change 1\n") {
		t.Errorf("rollout history statefulset: got %q", out)
	}
	out = k.ok(t, "-n", ns, "rollout", "history", "daemonset/agent")
	if !strings.Contains(out, "3         change 2") || strings.Contains(out, "change 0") {
		t.Errorf("rollout history daemonset: got %q", out)
	}
	want := rows(
		[]string{"NAME", "CONTROLLER", "REVISION", "AGE"},
		[]string{"agent-rev2", "daemonset.apps/agent", "3", "<age>"},
		[]string{"db-rev0", "statefulset.apps/db", "1", "<age>"},
		[]string{"db-rev1", "statefulset.apps/db", "2", "<age>"},
	)
	if out := k.ok(t, "-n", ns, "get", "controllerrevisions"); !slices.EqualFunc(tableCells(out), want, slices.Equal) {
		t.Errorf("get controllerrevisions: got\n%s\nwant cells %q", out, want)
	}
	if out := k.ok(t, "-n", ns, "rollout", "restart", "statefulset/db"); out != "statefulset.apps/db restarted\n" {
		t.Errorf("rollout restart statefulset: got %q", out)
	}
}

// testKubectlAppsExpose: expose deployment makes a Service from the
// deployment's selector and container port.
func testKubectlAppsExpose(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	k.apply(t, ns, appsManifest(ns))
	if out := k.ok(t, "-n", ns, "expose", "deployment", "api", "--port=80", "--target-port=8080"); out != "service/api exposed\n" {
		t.Errorf("expose: got %q", out)
	}
	svc, err := k.cs.CoreV1().Services(ns).Get(context.Background(), "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector["app"] != "api" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 ||
		svc.Spec.Ports[0].TargetPort != intstr.FromInt32(8080) || svc.Spec.ClusterIP == "" {
		t.Errorf("got service %+v, want selector app=api, port 80 -> 8080, a cluster IP", svc.Spec)
	}
	// Without --port, the container port is taken.
	k.ok(t, "-n", ns, "expose", "deployment", "api", "--name=api2")
	svc, err = k.cs.CoreV1().Services(ns).Get(context.Background(), "api2", metav1.GetOptions{})
	if err != nil || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("expose without --port: %v %+v", err, svc)
	}
}

// testKubectlAppsAutoscale: kubectl autoscale makes a HorizontalPodAutoscaler
// (kubectl 1.27 writes autoscaling/v1, newer ones autoscaling/v2): one
// storage, read back the same through both versions, printed with
// upstream's columns (no metrics controller, so no current value).
func testKubectlAppsAutoscale(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	k.ok(t, "-n", ns, "create", "deployment", "web", "--image=nginx:1.25")
	if out := k.ok(t, "-n", ns, "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80"); out != "horizontalpodautoscaler.autoscaling/web autoscaled\n" {
		t.Errorf("autoscale: got %q", out)
	}
	ctx := context.Background()
	v2, err := k.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := v2.Spec.ScaleTargetRef
	if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != "web" || *v2.Spec.MinReplicas != 2 || v2.Spec.MaxReplicas != 5 {
		t.Errorf("got autoscaler spec %+v, want apps/v1 Deployment web, 2..5", v2.Spec)
	}
	if m := v2.Spec.Metrics; len(m) != 1 || m[0].Resource == nil || m[0].Resource.Name != corev1.ResourceCPU || m[0].Resource.Target.AverageUtilization == nil || *m[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("got metrics %+v, want cpu at 80%% utilization", v2.Spec.Metrics)
	}
	v1, err := k.cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || v1.Spec.TargetCPUUtilizationPercentage == nil || *v1.Spec.TargetCPUUtilizationPercentage != 80 || v1.Spec.MaxReplicas != 5 {
		t.Errorf("autoscaling/v1 read: %v %+v", err, v1)
	}
	// Upstream's printer (pkg/printers/internalversion/printers.go,
	// v1.37): NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE, the
	// target as "<metric>: <current>/<target>".
	got := tableCells(k.ok(t, "-n", ns, "get", "hpa", "web"))
	want := [][]string{{"NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"}, {"web", "Deployment/web", "cpu: <unknown>/80%", "2", "5", "0"}}
	if len(got) != 2 || !slices.Equal(got[0], want[0]) || len(got[1]) != 7 || !slices.Equal(got[1][:6], want[1]) {
		t.Errorf("get hpa: got %q, want %q and an age", got, want)
	}
	// Autoscaling the same deployment again is refused as a duplicate.
	r := k.run(t, "", nil, "-n", ns, "autoscale", "deployment", "web", "--max=3")
	if r.code == 0 || !strings.Contains(r.stderr, `horizontalpodautoscalers.autoscaling "web" already exists`) {
		t.Errorf("second autoscale: %s", r)
	}
}

// testKubectlAppsTables compares `kubectl get -o wide` of each kind with
// upstream's printers (v1.37) for the same objects.
func testKubectlAppsTables(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	k.apply(t, ns, appsManifest(ns))
	tests := []struct {
		args []string
		want [][]string
	}{
		{[]string{"get", "deployments"}, rows(
			[]string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"},
			[]string{"api", "0/2", "0", "0", "<age>"})},
		{[]string{"get", "deployments", "-o", "wide"}, rows(
			[]string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
			[]string{"api", "0/2", "0", "0", "<age>", "api", "registry.example.com/api:1", "app=api"})},
		{[]string{"get", "replicasets", "-o", "wide"}, rows(
			[]string{"NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
			[]string{"rs", "1", "0", "0", "<age>", "c", "busybox:1.36", "app=rs"})},
		{[]string{"get", "statefulsets", "-o", "wide"}, rows(
			[]string{"NAME", "READY", "AGE", "CONTAINERS", "IMAGES"},
			[]string{"db", "0/1", "<age>", "pg", "postgres:16"})},
		{[]string{"get", "daemonsets"}, rows(
			[]string{"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"},
			[]string{"agent", "0", "0", "0", "0", "0", "kubernetes.io/os=linux", "<age>"})},
		{[]string{"get", "daemonsets", "-o", "wide"}, rows(
			[]string{"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
			[]string{"agent", "0", "0", "0", "0", "0", "kubernetes.io/os=linux", "<age>", "agent", "busybox:1.36", "app=agent"})},
	}
	for _, tc := range tests {
		out := k.ok(t, append([]string{"-n", ns}, tc.args...)...)
		if got := tableCells(out); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("kubectl %s: got\n%s\nwant cells %q", strings.Join(tc.args, " "), out, tc.want)
		}
	}
	if r := k.run(t, "", nil, "-n", ns, "get", "controllerrevisions"); r.code != 0 || r.stderr != "No resources found in "+ns+" namespace.\n" {
		t.Errorf("get controllerrevisions: %s", r)
	}
	// `get all` lists the workloads (category "all"), not the revisions.
	out := k.ok(t, "-n", ns, "get", "all", "-o", "name")
	for _, want := range []string{"deployment.apps/api", "replicaset.apps/rs", "statefulset.apps/db", "daemonset.apps/agent"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("get all: %q lacks %s", out, want)
		}
	}
}

// testKubectlAppsExplain: explain reads the apps/v1 OpenAPI documents.
func testKubectlAppsExplain(t *testing.T, e *env, k *kc) {
	for _, tc := range []struct{ resource, kind, field string }{
		{"deployments.spec.strategy", "Deployment", "rollingUpdate"},
		{"replicasets", "ReplicaSet", "spec"},
		{"statefulsets.spec.updateStrategy", "StatefulSet", "partition"},
		{"daemonsets.spec", "DaemonSet", "revisionHistoryLimit"},
		{"controllerrevisions", "ControllerRevision", "revision"},
	} {
		out := k.ok(t, "explain", tc.resource, "--recursive")
		if !strings.Contains(out, "KIND:       "+tc.kind) || !strings.Contains(out, "VERSION:    v1") || !strings.Contains(out, tc.field) {
			t.Errorf("explain %s: got\n%s", tc.resource, out)
		}
	}
}

func rows(r ...[]string) [][]string { return r }

// kubectlColumns separates the cells of kubectl's tables (padded with at
// least three spaces; a header such as "NODE SELECTOR" has one).
var kubectlColumns = regexp.MustCompile(`\s{2,}`)

// kubectlAgeCell is an AGE cell ("0s", "5m", "2d3h").
var kubectlAgeCell = regexp.MustCompile(`^(\d+[smhdy])+$`)

// tableCells splits kubectl's table output into cells, ages replaced with
// <age>.
func tableCells(out string) [][]string {
	var cells [][]string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		row := kubectlColumns.Split(strings.TrimSpace(line), -1)
		for i, c := range row {
			if kubectlAgeCell.MatchString(c) {
				row[i] = "<age>"
			}
		}
		cells = append(cells, row)
	}
	return cells
}
