package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubectlNetworkingStorageSchedulingNode drives every resource of
// networking.k8s.io/v1, storage.k8s.io/v1, scheduling.k8s.io/v1 and
// node.k8s.io/v1 with kubectl 1.27 and 1.33 on both backends: apply
// (server-side defaults stored), get -o wide (the server's tables, columns
// as upstream's printers), explain (OpenAPI), delete; plus the objects the
// server creates at start (the system priority classes, the "kubernetes"
// ServiceCIDR) and validation errors as kubectl shows them.
func TestKubectlNetworkingStorageSchedulingNode(t *testing.T) {
	binaries := kubectlPair(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bin := range binaries {
			t.Run(filepath.Base(bin), func(t *testing.T) {
				t.Parallel()
				runNetStorageFlows(t, e, newKC(t, e, bin), strings.TrimPrefix(filepath.Base(bin), "kubectl.1."))
			})
		}
	})
}

func runNetStorageFlows(t *testing.T, e *env, k *kc, minor string) {
	ctx := context.Background()
	ns := e.newNamespace(t)
	// Cluster-scoped names are unique per kubectl version (the subtests
	// run in parallel on one server).
	s := "v" + minor

	// Discovery as kubectl api-resources shows it, against the list
	// kube-apiserver v1.37 prints for these groups.
	want, err := os.ReadFile("testdata/api-resources-netstorage.txt")
	if err != nil {
		t.Fatal(err)
	}
	var wantLines, gotLines []string
	for _, l := range strings.Split(string(want), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			wantLines = append(wantLines, l)
		}
	}
	for _, g := range []string{"networking.k8s.io", "node.k8s.io", "scheduling.k8s.io", "storage.k8s.io"} {
		for _, l := range strings.Split(k.ok(t, "api-resources", "--no-headers", "--api-group="+g), "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				gotLines = append(gotLines, strings.Join(f, " "))
			}
		}
	}
	if diff := cmp.Diff(wantLines, gotLines); diff != "" {
		t.Errorf("api-resources (-want +got):\n%s", diff)
	}

	// The objects made at start.
	out := k.ok(t, "get", "priorityclasses", "-o", "wide")
	tableLine(t, out, `NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY`)
	tableLine(t, out, `system-cluster-critical\s+2000000000\s+false\s+\S+\s+PreemptLowerPriority`)
	tableLine(t, out, `system-node-critical\s+2000001000\s+false\s+\S+\s+PreemptLowerPriority`)
	r := k.run(t, "", nil, "delete", "priorityclass", "system-node-critical")
	if r.code == 0 || !strings.Contains(r.stderr, `priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted`) {
		t.Errorf("delete a system priority class: %s", r)
	}
	eventually(t, 10*time.Second, "the kubernetes ServiceCIDR is Ready", func() error {
		sc, err := e.cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady) || len(sc.Spec.CIDRs) != 1 {
			return fmt.Errorf("servicecidr %+v", sc)
		}
		return nil
	})
	out = k.ok(t, "get", "servicecidr", "kubernetes")
	tableLine(t, out, `NAME\s+CIDRS\s+AGE`)
	tableLine(t, out, `kubernetes\s+10\.0\.0\.0/24\s+\S+`)

	// Every resource: applied, shown, explained.
	type flow struct {
		resource, name, manifest string
		namespaced               bool
		header, row, explain     string
	}
	flows := []flow{
		{"ingressclass", "nginx-" + s, `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx-` + s + `
spec:
  controller: example.com/ingress-controller
  parameters:
    apiGroup: k8s.example.com
    kind: IngressParameters
    name: external-lb
`, false, `NAME\s+CONTROLLER\s+PARAMETERS\s+AGE`, `nginx-` + s + `\s+example\.com/ingress-controller\s+IngressParameters\.k8s\.example\.com/external-lb\s+\d+s`, "ingressclass.spec.controller"},
		// The documentation's minimal Ingress.
		{"ingress", "minimal-ingress", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: minimal-ingress
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /
spec:
  ingressClassName: nginx-example
  tls:
  - hosts: [foo.bar.com]
    secretName: testsecret-tls
  rules:
  - host: foo.bar.com
    http:
      paths:
      - path: /testpath
        pathType: Prefix
        backend:
          service:
            name: test
            port:
              number: 80
`, true, `NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE`, `minimal-ingress\s+nginx-example\s+foo\.bar\.com\s+80, 443\s+\d+s`, "ingress.spec.rules"},
		// The documentation's test-network-policy.
		{"networkpolicy", "test-network-policy", `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: test-network-policy
spec:
  podSelector:
    matchLabels:
      role: db
  ingress:
  - from:
    - ipBlock:
        cidr: 172.17.0.0/16
        except:
        - 172.17.1.0/24
    - podSelector:
        matchLabels:
          role: frontend
    ports:
    - port: 6379
  egress:
  - to:
    - ipBlock:
        cidr: 10.0.0.0/24
    ports:
    - protocol: TCP
      port: 5978
`, true, `NAME\s+POD-SELECTOR\s+AGE`, `test-network-policy\s+role=db\s+\d+s`, "networkpolicy.spec.podSelector"},
		{"ipaddress", "192.168.7." + minor, `apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata:
  name: 192.168.7.` + minor + `
spec:
  parentRef:
    resource: services
    namespace: ` + ns + `
    name: foo
`, false, `NAME\s+PARENTREF`, `192\.168\.7\.` + minor + `\s+services/` + ns + `/foo`, "ipaddress.spec.parentRef"},
		{"servicecidr", "extra-" + s, `apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata:
  name: extra-` + s + `
spec:
  cidrs: [10.96.` + minor + `.0/24, "2001:db8:` + minor + `::/112"]
`, false, `NAME\s+CIDRS\s+AGE`, `extra-` + s + `\s+10\.96\.` + minor + `\.0/24,2001:db8:` + minor + `::/112\s+\d+s`, "servicecidr.spec.cidrs"},
		{"storageclass", "fast-" + s, `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast-` + s + `
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
`, false, `NAME\s+PROVISIONER\s+RECLAIMPOLICY\s+VOLUMEBINDINGMODE\s+ALLOWVOLUMEEXPANSION\s+AGE`,
			`fast-` + s + ` \(default\)\s+kubernetes\.io/no-provisioner\s+Delete\s+WaitForFirstConsumer\s+false\s+\d+s`, "storageclass.provisioner"},
		{"csidriver", s + ".csi.example.com", `apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: ` + s + `.csi.example.com
spec:
  tokenRequests:
  - audience: vault
`, false, `NAME\s+ATTACHREQUIRED\s+PODINFOONMOUNT\s+STORAGECAPACITY\s+TOKENREQUESTS\s+REQUIRESREPUBLISH\s+MODES\s+AGE`,
			s + `\.csi\.example\.com\s+true\s+false\s+false\s+vault\s+false\s+Persistent\s+\d+s`, "csidriver.spec.attachRequired"},
		{"csinode", "node-" + s, `apiVersion: storage.k8s.io/v1
kind: CSINode
metadata:
  name: node-` + s + `
spec:
  drivers:
  - name: csi.example.com
    nodeID: node-` + s + `
    topologyKeys: [topology.kubernetes.io/zone]
`, false, `NAME\s+DRIVERS\s+AGE`, `node-` + s + `\s+1\s+\d+s`, "csinode.spec.drivers"},
		{"csistoragecapacity", "cap", `apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata:
  name: cap
storageClassName: fast-` + s + `
capacity: 10Gi
nodeTopology:
  matchLabels:
    topology.kubernetes.io/zone: a
`, true, `NAME\s+CREATED AT`, `cap\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`, "csistoragecapacity.capacity"}, // v1.37.2's default table
		{"volumeattachment", "va-" + s, `apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata:
  name: va-` + s + `
spec:
  attacher: csi.example.com
  nodeName: node-` + s + `
  source:
    persistentVolumeName: pv-1
`, false, `NAME\s+ATTACHER\s+PV\s+NODE\s+ATTACHED\s+AGE`, `va-` + s + `\s+csi\.example\.com\s+pv-1\s+node-` + s + `\s+false\s+\d+s`, "volumeattachment.spec.attacher"},
		{"volumeattributesclass", "gold-" + s, `apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata:
  name: gold-` + s + `
driverName: csi.example.com
parameters:
  iops: "1000"
`, false, `NAME\s+DRIVERNAME\s+AGE`, `gold-` + s + `\s+csi\.example\.com\s+\d+s`, "volumeattributesclass.driverName"},
		{"priorityclass", "high-" + s, `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high-` + s + `
value: 1000000
description: "high priority"
`, false, `NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY`, `high-` + s + `\s+1000000\s+false\s+\d+s\s+PreemptLowerPriority`, "priorityclass.value"},
		{"runtimeclass", "gvisor-" + s, `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gvisor-` + s + `
handler: runsc
overhead:
  podFixed:
    memory: 120Mi
    cpu: 250m
`, false, `NAME\s+HANDLER\s+AGE`, `gvisor-` + s + `\s+runsc\s+\d+s`, "runtimeclass.handler"},
	}
	for _, f := range flows {
		out := k.apply(t, ns, f.manifest)
		if !strings.Contains(out, f.name+" created") {
			t.Errorf("apply %s: %s", f.resource, out)
		}
		// A second apply changes nothing (server-side defaults are not a
		// diff), except for the network policy: its rule lists have no
		// merge key, so kubectl's patch replaces the ingress list whose
		// ports the server defaulted (protocol TCP), as with upstream.
		if out := k.apply(t, ns, f.manifest); f.resource != "networkpolicy" && !strings.Contains(out, f.name+" unchanged") {
			t.Errorf("apply %s again: %s", f.resource, out)
		}
		// Server-side apply of the same manifest takes over the fields.
		if out := k.apply(t, ns, f.manifest, "--server-side", "--force-conflicts"); !strings.Contains(out, f.name+" serverside-applied") {
			t.Errorf("apply --server-side %s: %s", f.resource, out)
		}
		args := []string{"get", f.resource, f.name, "-o", "wide"}
		if f.namespaced {
			args = append([]string{"-n", ns}, args...)
		}
		out = k.ok(t, args...)
		tableLine(t, out, f.header)
		tableLine(t, out, f.row)
		field := f.explain[strings.LastIndex(f.explain, ".")+1:]
		if out := k.ok(t, "explain", f.explain); !strings.Contains(out, field) {
			t.Errorf("explain %s: %s", f.explain, out)
		}
	}

	// Stored forms: upstream's defaults, applied on the way in.
	np, err := e.cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, "test-network-policy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(np.Spec.PolicyTypes); got != "[Ingress Egress]" || *np.Spec.Ingress[0].Ports[0].Protocol != "TCP" || np.Generation != 1 {
		t.Errorf("stored network policy: types %s, ports %+v, generation %d", got, np.Spec.Ingress[0].Ports, np.Generation)
	}
	ic, err := e.cs.NetworkingV1().IngressClasses().Get(ctx, "nginx-"+s, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ic.Spec.Parameters.Scope == nil || *ic.Spec.Parameters.Scope != "Cluster" {
		t.Errorf("ingress class parameters: %+v", ic.Spec.Parameters)
	}
	sc, err := e.cs.StorageV1().StorageClasses().Get(ctx, "fast-"+s, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *sc.ReclaimPolicy != "Delete" {
		t.Errorf("storage class reclaim policy %v", *sc.ReclaimPolicy)
	}
	pc, err := e.cs.SchedulingV1().PriorityClasses().Get(ctx, "high-"+s, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != "PreemptLowerPriority" {
		t.Errorf("priority class preemption policy %v", pc.PreemptionPolicy)
	}

	// Status subresources: an ingress's load balancer shows in ADDRESS.
	ing, err := e.cs.NetworkingV1().Ingresses(ns).Get(ctx, "minimal-ingress", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.7"}, {Hostname: "lb.example.com"}}
	if _, err := e.cs.NetworkingV1().Ingresses(ns).UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out = k.ok(t, "-n", ns, "get", "ingress", "minimal-ingress")
	tableLine(t, out, `minimal-ingress\s+nginx-example\s+foo\.bar\.com\s+203\.0\.113\.7,lb\.example\.com\s+80, 443\s+\d+s`)

	// Validation errors as kubectl prints them (upstream's messages).
	for _, c := range []struct{ manifest, want string }{
		{`apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: system-` + s + `
value: 10
`, `metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-` + s + ` is not a known system priority class`},
		{`apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: huge-` + s + `
value: 1000000001
`, `value: Forbidden: maximum allowed value of a user defined priority is 1000000000`},
		{`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: bad
spec:
  rules:
  - http:
      paths:
      - path: testpath
        pathType: Prefix
        backend:
          service:
            name: test
            port:
              number: 80
`, `spec.rules[0].http.paths[0].path: Invalid value: "testpath": must be an absolute path`},
		{`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: bad-` + s + `
provisioner: kubernetes.io/no-provisioner
reclaimPolicy: Recycle
`, `reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"`},
		{`apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: bad-` + s + `
handler: Not_A_Label
`, `handler: Invalid value: "Not_A_Label": a lowercase RFC 1123 label must consist of`},
		{`apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata:
  name: bad-` + s + `
spec:
  cidrs: [10.0.0.0/24, 10.1.0.0/24]
`, /* kube-apiserver v1.37.2 answered the list as the value */ `spec.cidrs: Invalid value: ["10.0.0.0/24","10.1.0.0/24"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64`},
	} {
		r := k.run(t, c.manifest, nil, "-n", ns, "apply", "-f", "-")
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("want an error containing %q: %s", c.want, r)
		}
	}

	// Updates that upstream forbids.
	r = k.run(t, "", nil, "patch", "priorityclass", "high-"+s, "--type=merge", "-p", `{"value":5}`)
	if r.code == 0 || !strings.Contains(r.stderr, `value: Forbidden: may not be changed in an update.`) {
		t.Errorf("patch a priority class's value: %s", r)
	}
	r = k.run(t, "", nil, "patch", "runtimeclass", "gvisor-"+s, "--type=merge", "-p", `{"handler":"kata"}`)
	// v1.37.2 answers from +k8s:immutable (beta), which reports no value.
	if r.code == 0 || !strings.Contains(r.stderr, `handler: Invalid value: null: field is immutable`) {
		t.Errorf("patch a runtime class's handler: %s", r)
	}

	// Deletes.
	for _, f := range flows {
		args := []string{"delete", f.resource, f.name}
		if f.namespaced {
			args = append([]string{"-n", ns}, args...)
		}
		if out := k.ok(t, args...); !strings.Contains(out, "deleted") {
			t.Errorf("delete %s: %s", f.resource, out)
		}
	}
}
