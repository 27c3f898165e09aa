package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// coreOtherManifest holds one object of each kind the test drives: a node
// as a kubelet registers it (with its status), a volume, a claim, a
// replication controller (upstream's docs example), a limit range and a
// quota. Cluster-scoped names carry suffix; every object the label
// test=<suffix>.
func coreOtherManifest(suffix string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: worker-%[1]s
  labels: {test: %[1]s, node-role.kubernetes.io/worker: ""}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  addresses:
  - {type: InternalIP, address: 10.0.0.5}
  - {type: ExternalIP, address: 203.0.113.5}
  nodeInfo: {kubeletVersion: v1.37.0, osImage: Ubuntu, kernelVersion: 6.8.0, containerRuntimeVersion: "containerd://2.0.0",
    machineID: m, systemUUID: s, bootID: b, kubeProxyVersion: "", operatingSystem: linux, architecture: amd64}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady}
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-%[1]s
  labels: {test: %[1]s}
spec:
  storageClassName: manual
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /mnt/data}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: task-pv-claim
  labels: {test: %[1]s}
spec:
  storageClassName: manual
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 3Gi}}
---
apiVersion: v1
kind: ReplicationController
metadata:
  name: nginx
spec:
  replicas: 3
  selector: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx
        ports: [{containerPort: 80}]
---
apiVersion: v1
kind: LimitRange
metadata:
  name: cpu-min-max
  labels: {test: %[1]s}
spec:
  limits: [{max: {cpu: 800m}, min: {cpu: 200m}, type: Container}]
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: mem-cpu-demo
  labels: {test: %[1]s}
spec:
  hard: {requests.cpu: "1", requests.memory: 1Gi, limits.cpu: "2", limits.memory: 2Gi}
`, suffix)
}

// TestKubectlCoreOther drives the flows of nodes, volumes, claims,
// replication controllers, limit ranges, quotas and component statuses
// with the real kubectl (on PATH, 1.27 and 1.33) on both backends: apply,
// get -o wide, get pv,pvc, scale rc, get cs, explain.
func TestKubectlCoreOther(t *testing.T) {
	binaries := kubectls(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bin := range binaries {
			t.Run(filepath.Base(bin), func(t *testing.T) {
				t.Parallel()
				testKubectlCoreOther(t, e, newKC(t, e, bin))
			})
		}
	})
}

// rows are the lines of a kubectl table, each split on runs of spaces.
func coreRows(out string) [][]string {
	var out2 [][]string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.TrimSpace(line) != "" {
			out2 = append(out2, regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1))
		}
	}
	return out2
}

func testKubectlCoreOther(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	suffix := ns
	node, pv := "worker-"+suffix, "pv-"+suffix
	t.Cleanup(func() {
		ctx := context.Background()
		_ = e.cs.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
		_ = e.cs.CoreV1().PersistentVolumes().Delete(ctx, pv, metav1.DeleteOptions{})
	})
	out := k.apply(t, ns, coreOtherManifest(suffix))
	for _, want := range []string{"node/" + node + " created", "persistentvolume/" + pv + " created",
		"persistentvolumeclaim/task-pv-claim created", "replicationcontroller/nginx created",
		"limitrange/cpu-min-max created", "resourcequota/mem-cpu-demo created"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply printed %q, want %q", out, want)
		}
	}

	// get nodes -o wide (upstream's printNode).
	got := coreRows(k.ok(t, "get", "nodes", "-l", "test="+suffix, "-o", "wide"))
	wantHeader := []string{"NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"}
	if len(got) != 2 || !slices.Equal(got[0], wantHeader) {
		t.Fatalf("get nodes -o wide: got %q, want the header %q and one node", got, wantHeader)
	}
	row := got[1]
	// KERNEL-VERSION carries the architecture: kube-apiserver v1.37.2
	// printed "6.8.0 (amd64)" for this nodeInfo.
	if want := []string{node, "Ready", "worker", row[3], "v1.37.0", "10.0.0.5", "203.0.113.5", "Ubuntu", "6.8.0 (amd64)", "containerd://2.0.0"}; !slices.Equal(row, want) {
		t.Errorf("get nodes -o wide: got row %q, want %q", row, want)
	}
	k.ok(t, "cordon", node)
	got = coreRows(k.ok(t, "get", "nodes", "--field-selector", "spec.unschedulable=true", "-l", "test="+suffix))
	if len(got) != 2 || got[1][0] != node || got[1][1] != "Ready,SchedulingDisabled" {
		t.Errorf("get nodes --field-selector spec.unschedulable=true: got %q, want the cordoned node", got)
	}
	if r := k.run(t, "", nil, "get", "nodes", "--field-selector", "spec.podCIDR=x"); r.code == 0 || !strings.Contains(r.stderr, "field label not supported: spec.podCIDR") {
		t.Errorf("get nodes with an unsupported field selector: %s", r)
	}

	// get pv,pvc (upstream's printPersistentVolume and printPersistentVolumeClaim).
	out = k.ok(t, "-n", ns, "get", "pv,pvc", "-l", "test="+suffix)
	blocks := strings.Split(strings.TrimSpace(out), "\n\n")
	if len(blocks) != 2 {
		t.Fatalf("get pv,pvc: got %q, want two tables", out)
	}
	got = coreRows(blocks[0])
	if want := []string{"NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"}; len(got) != 2 || !slices.Equal(got[0], want) {
		t.Fatalf("get pv: got %q, want the header %q and one volume", got, want)
	}
	if want := []string{"persistentvolume/" + pv, "10Gi", "RWO", "Retain", "Pending", "manual", "<unset>"}; !slices.Equal(got[1][:len(want)], want) {
		t.Errorf("get pv: got row %q, want it to start with %q", got[1], want)
	}
	got = coreRows(blocks[1])
	if want := []string{"NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"}; len(got) != 2 || !slices.Equal(got[0], want) {
		t.Fatalf("get pvc: got %q, want the header %q and one claim", got, want)
	}
	if want := []string{"persistentvolumeclaim/task-pv-claim", "Pending", "manual", "<unset>"}; !slices.Equal(got[1][:len(want)], want) {
		t.Errorf("get pvc: got row %q, want it to start with %q", got[1], want)
	}

	// get rc -o wide, scale rc.
	got = coreRows(k.ok(t, "-n", ns, "get", "rc", "-o", "wide"))
	if want := []string{"NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"}; len(got) != 2 || !slices.Equal(got[0], want) {
		t.Fatalf("get rc -o wide: got %q, want the header %q and one controller", got, want)
	}
	if row := got[1]; !slices.Equal(row[:4], []string{"nginx", "3", "0", "0"}) || !slices.Equal(row[5:], []string{"nginx", "nginx", "app=nginx"}) {
		t.Errorf("get rc -o wide: got row %q", row)
	}
	if out := k.ok(t, "-n", ns, "scale", "rc", "nginx", "--replicas=5"); !strings.Contains(out, "replicationcontroller/nginx scaled") {
		t.Errorf("scale rc printed %q", out)
	}
	rc, err := e.cs.CoreV1().ReplicationControllers(ns).Get(context.Background(), "nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *rc.Spec.Replicas != 5 || rc.Generation != 2 || rc.Labels["app"] != "nginx" {
		t.Errorf("after scale: got %d replicas, generation %d, labels %v; want 5, 2 and the template's labels (defaulted)", *rc.Spec.Replicas, rc.Generation, rc.Labels)
	}

	// get limits,quota.
	out = k.ok(t, "-n", ns, "get", "limits,quota")
	blocks = strings.Split(strings.TrimSpace(out), "\n\n")
	if len(blocks) != 2 || !slices.Equal(coreRows(blocks[0])[0], []string{"NAME", "CREATED AT"}) ||
		!slices.Equal(coreRows(blocks[1])[0], []string{"NAME", "REQUEST", "LIMIT", "AGE"}) {
		t.Errorf("get limits,quota: got %q, want NAME CREATED AT and NAME REQUEST LIMIT AGE", out)
	}

	// get cs: etcd-0 is kapi's own etcd health, on etcd only; upstream's
	// deprecation warning.
	r := k.run(t, "", nil, "get", "cs")
	if r.code != 0 || !strings.Contains(r.stderr, "Warning: v1 ComponentStatus is deprecated in v1.19+") {
		t.Fatalf("get cs: %s", r)
	}
	got = coreRows(r.stdout)
	if len(got) == 0 || !slices.Equal(got[0], []string{"NAME", "STATUS", "MESSAGE", "ERROR"}) {
		t.Fatalf("get cs: got %q", got)
	}
	var names []string
	for _, row := range got[1:] {
		names = append(names, row[0])
		if row[0] == "etcd-0" && !slices.Equal(row, []string{"etcd-0", "Healthy", "ok"}) {
			t.Errorf("get cs: got %q, want etcd-0 Healthy ok", row)
		}
	}
	wantNames := []string{"controller-manager", "scheduler"}
	if e.backend == "etcd" {
		wantNames = []string{"controller-manager", "etcd-0", "scheduler"}
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("get cs: got components %q, want %q", names, wantNames)
	}

	// explain.
	for _, c := range []struct{ resource, kind string }{
		{"nodes", "Node"}, {"pv", "PersistentVolume"}, {"pvc.spec.resources", "PersistentVolumeClaim"},
		{"rc.spec.replicas", "ReplicationController"}, {"limits", "LimitRange"}, {"quota", "ResourceQuota"},
		{"componentstatuses", "ComponentStatus"},
	} {
		if out := k.ok(t, "explain", c.resource); !regexp.MustCompile(`KIND:\s+` + c.kind + `\n`).MatchString(out) {
			t.Errorf("explain %s: got %q, want KIND: %s", c.resource, out, c.kind)
		}
	}
}

// TestCoreOtherDefaultsEveryPath checks that the v1 defaults of
// replication controllers and volumes reach the stored object through
// every write path (create, update, JSON, merge, strategic merge and apply
// patches), as kube-apiserver decodes (and so defaults) every request body
// and patched object.
func TestCoreOtherDefaultsEveryPath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		rcs := e.cs.CoreV1().ReplicationControllers(ns)
		check := func(path string, rc *corev1.ReplicationController) {
			t.Helper()
			if rc.Spec.Replicas == nil || *rc.Spec.Replicas != 1 || rc.Spec.Selector["app"] != "web" || rc.Labels["app"] != "web" ||
				rc.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || rc.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("%s: got replicas %v, selector %v, labels %v, restartPolicy %q, pull policy %q; want the defaults",
					path, rc.Spec.Replicas, rc.Spec.Selector, rc.Labels, rc.Spec.Template.Spec.RestartPolicy, rc.Spec.Template.Spec.Containers[0].ImagePullPolicy)
			}
		}
		body := func(name string) string {
			return `{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"` + name + `"},
				"spec":{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"web:1.0"}]}}}}`
		}
		r := e.raw(t, "POST", "/api/v1/namespaces/"+ns+"/replicationcontrollers", []byte(body("create")), "Content-Type", "application/json")
		if r.code != 201 {
			t.Fatalf("create: %d %s", r.code, r.body)
		}
		rc, err := rcs.Get(ctx, "create", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check("create", rc)
		// update: a PUT without replicas.
		r = e.raw(t, "PUT", "/api/v1/namespaces/"+ns+"/replicationcontrollers/create", []byte(body("create")), "Content-Type", "application/json")
		if r.code != 200 {
			t.Fatalf("update: %d %s", r.code, r.body)
		}
		rc, _ = rcs.Get(ctx, "create", metav1.GetOptions{})
		check("update", rc)
		patches := []struct{ name, contentType, patch string }{
			{"json", "application/json-patch+json", `[{"op":"remove","path":"/spec/replicas"},{"op":"remove","path":"/spec/template/spec/restartPolicy"}]`},
			{"merge", "application/merge-patch+json", `{"spec":{"replicas":null,"template":{"spec":{"restartPolicy":null}}}}`},
			{"strategic", "application/strategic-merge-patch+json", `{"spec":{"replicas":null,"template":{"spec":{"restartPolicy":null}}}}`},
		}
		for _, p := range patches {
			r = e.raw(t, "PATCH", "/api/v1/namespaces/"+ns+"/replicationcontrollers/create", []byte(p.patch), "Content-Type", p.contentType)
			if r.code != 200 {
				t.Fatalf("%s patch: %d %s", p.name, r.code, r.body)
			}
			rc, _ = rcs.Get(ctx, "create", metav1.GetOptions{})
			check(p.name+" patch", rc)
		}
		r = e.raw(t, "PATCH", "/api/v1/namespaces/"+ns+"/replicationcontrollers/applied?fieldManager=test", []byte(body("applied")), "Content-Type", "application/apply-patch+yaml")
		if r.code != 201 {
			t.Fatalf("apply: %d %s", r.code, r.body)
		}
		rc, _ = rcs.Get(ctx, "applied", metav1.GetOptions{})
		check("apply", rc)

		// Volumes: reclaim policy, volume mode and phase.
		name := "pv-" + ns
		t.Cleanup(func() { _ = e.cs.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{}) })
		pvBody := `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"` + name + `"},
			"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/mnt"}}}`
		r = e.raw(t, "PATCH", "/api/v1/persistentvolumes/"+name+"?fieldManager=test", []byte(pvBody), "Content-Type", "application/apply-patch+yaml")
		if r.code != 201 {
			t.Fatalf("apply pv: %d %s", r.code, r.body)
		}
		for _, p := range []struct{ name, contentType, patch string }{
			{"json", "application/json-patch+json", `[{"op":"remove","path":"/spec/persistentVolumeReclaimPolicy"}]`},
			{"merge", "application/merge-patch+json", `{"spec":{"persistentVolumeReclaimPolicy":null}}`},
			{"strategic", "application/strategic-merge-patch+json", `{"spec":{"persistentVolumeReclaimPolicy":null}}`},
		} {
			r = e.raw(t, "PATCH", "/api/v1/persistentvolumes/"+name, []byte(p.patch), "Content-Type", p.contentType)
			if r.code != 200 {
				t.Fatalf("%s patch pv: %d %s", p.name, r.code, r.body)
			}
			pv, err := e.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Spec.VolumeMode == nil ||
				*pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || pv.Status.Phase != corev1.VolumePending {
				t.Errorf("%s patch pv: got policy %q, mode %v, phase %q; want Retain, Filesystem, Pending", p.name,
					pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.VolumeMode, pv.Status.Phase)
			}
		}
	})
}

// TestCoreOtherProtobufAndNamespaceDeletion writes and reads every kind in
// protobuf, watches controllers, and checks that deleting a namespace
// removes its claims, controllers, limit ranges and quotas (the namespace
// controller empties them, so the namespace goes).
func TestCoreOtherProtobufAndNamespaceDeletion(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		cfg := e.config()
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
		cs := kubernetes.NewForConfigOrDie(cfg)
		ns := e.newNamespace(t)
		watcher, err := cs.CoreV1().ReplicationControllers(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer watcher.Stop()
		replicas := int32(2)
		rc := &corev1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ReplicationControllerSpec{
				Replicas: &replicas,
				Template: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}},
				},
			},
		}
		created, err := cs.CoreV1().ReplicationControllers(ns).Create(ctx, rc, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create rc in protobuf: %v", err)
		}
		if created.Spec.Selector["app"] != "web" || created.Spec.Template.Spec.DNSPolicy != corev1.DNSClusterFirst {
			t.Errorf("got selector %v, dnsPolicy %q; want the defaults", created.Spec.Selector, created.Spec.Template.Spec.DNSPolicy)
		}
		select {
		case ev := <-watcher.ResultChan():
			if got, ok := ev.Object.(*corev1.ReplicationController); !ok || ev.Type != "ADDED" || got.Name != "web" {
				t.Errorf("got watch event %s %T, want ADDED web", ev.Type, ev.Object)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no watch event within 30s")
		}
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pvc: %v", err)
		}
		if _, err := cs.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create limit range: %v", err)
		}
		if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create quota: %v", err)
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns}, Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
		got, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create node: %v", err)
		}
		defer func() { _ = cs.CoreV1().Nodes().Delete(ctx, ns, metav1.DeleteOptions{}) }()
		if q := got.Status.Allocatable[corev1.ResourceCPU]; q.String() != "2" {
			t.Errorf("got allocatable cpu %q, want the capacity (defaulted)", q.String())
		}
		if _, err := cs.CoreV1().ComponentStatuses().List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("list componentstatuses in protobuf: %v", err)
		}

		if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				left, _ := cs.CoreV1().ReplicationControllers(ns).List(ctx, metav1.ListOptions{})
				t.Fatalf("namespace %s still there after 30s (get: %v); controllers left: %d", ns, err, len(left.Items))
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// TestNodeProxyErrors drives nodes/{name}/proxy as far as a test may
// without a kubelet on a routable address: a missing node is 404, a node
// without an address upstream's error, a node whose kubelet is on
// loopback 400 (kube-apiserver never proxies to loopback), a name that
// does not parse 400, through raw requests, client-go and kubectl get
// --raw. (Forwarding to a kubelet is tested in the node package.)
func TestNodeProxyErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		suffix := e.newNamespace(t)
		loopback, bare := "loop-"+suffix, "bare-"+suffix
		for _, n := range []*corev1.Node{
			{ObjectMeta: metav1.ObjectMeta{Name: loopback}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: bare}},
		} {
			if _, err := e.cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = e.cs.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{}) })
		}
		for _, c := range []struct {
			path string
			code int
			msg  string
		}{
			{"/api/v1/nodes/missing-" + suffix + "/proxy/healthz", 404, `nodes \"missing-` + suffix + `\" not found`},
			{"/api/v1/nodes/" + loopback + "/proxy/healthz", 400, "address not allowed"},
			{"/api/v1/nodes/" + loopback + ":10255/proxy/metrics", 400, "address not allowed"},
			{"/api/v1/nodes/" + bare + "/proxy/", 500, "no preferred addresses found"},
			{"/api/v1/nodes/ftp:" + loopback + ":80/proxy/", 400, `invalid node request \"ftp:` + loopback + `:80\"`},
		} {
			r := e.raw(t, "GET", c.path, nil)
			if r.code != c.code || !strings.Contains(string(r.body), c.msg) || !strings.Contains(string(r.body), `"kind":"Status"`) {
				t.Errorf("GET %s: got %d %s, want %d and a Status with %q", c.path, r.code, r.body, c.code, c.msg)
			}
		}
		// Every proxy method reaches the same check.
		if r := e.raw(t, "POST", "/api/v1/nodes/"+loopback+"/proxy/x", []byte("{}")); r.code != 400 {
			t.Errorf("POST nodes/proxy: got %d %s, want 400", r.code, r.body)
		}
		_, err := e.cs.CoreV1().RESTClient().Get().Resource("nodes").Name("https:missing-" + suffix + ":10250").SubResource("proxy").Suffix("healthz").DoRaw(ctx)
		if !apierrors.IsNotFound(err) {
			t.Errorf("client-go GET nodes/https:missing:10250/proxy/healthz: got %v, want NotFound", err)
		}
		if bins := kubectls(t); len(bins) > 0 {
			k := newKC(t, e, bins[0])
			r := k.run(t, "", nil, "get", "--raw", "/api/v1/nodes/"+loopback+"/proxy/healthz")
			if r.code == 0 || !strings.Contains(r.stderr, "address not allowed") {
				t.Errorf("kubectl get --raw nodes/proxy of a loopback node: %s", r)
			}
		}
	})
}
