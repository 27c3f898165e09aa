package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// wideHeaders are the -o wide headers of every resource of issue 13's
// point 1, as kubectl prints kube-apiserver v1.37's tables: the column
// definitions of kubernetes/kubernetes
// pkg/printers/internalversion/printers.go (AddHandlers, v1.37), the
// Priority 1 columns included; limitranges have no printer there, so the
// server's default table (NAME, CREATED AT) of
// staging/src/k8s.io/apiserver/pkg/registry/rest/table.go.
var wideHeaders = map[string][]string{
	"pods":                     {"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"},
	"nodes":                    {"NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"},
	"persistentvolumes":        {"NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE", "VOLUMEMODE"},
	"persistentvolumeclaims":   {"NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE", "VOLUMEMODE"},
	"podtemplates":             {"NAME", "CONTAINERS", "IMAGES", "POD LABELS"},
	"replicationcontrollers":   {"NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
	"limitranges":              {"NAME", "CREATED AT"},
	"resourcequotas":           {"NAME", "REQUEST", "LIMIT", "AGE"},
	"componentstatuses":        {"NAME", "STATUS", "MESSAGE", "ERROR"},
	"deployments":              {"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
	"replicasets":              {"NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
	"statefulsets":             {"NAME", "READY", "AGE", "CONTAINERS", "IMAGES"},
	"daemonsets":               {"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
	"controllerrevisions":      {"NAME", "CONTROLLER", "REVISION", "AGE"},
	"jobs":                     {"NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
	"cronjobs":                 {"NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
	"horizontalpodautoscalers": {"NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"},
	"poddisruptionbudgets":     {"NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"},
}

// TestKubectlGetWideEveryResource runs `kubectl get -o wide` (kubectl
// 1.27 and 1.33, memory and embedded etcd) on every resource of issue
// 13's point 1, each holding one object (the mixed manifest's, a node, a
// controller revision), and compares the header with upstream's and the
// row's name with the object's.
func TestKubectlGetWideEveryResource(t *testing.T) {
	binaries := kubectlPair(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bin := range binaries {
			t.Run(filepath.Base(bin), func(t *testing.T) {
				t.Parallel()
				k := newKC(t, e, bin)
				ctx := context.Background()
				ns := e.newNamespace(t)
				pv, node := "pv-"+ns, "wide-"+ns
				t.Cleanup(func() {
					_ = e.cs.CoreV1().PersistentVolumes().Delete(context.Background(), pv, metav1.DeleteOptions{})
					_ = e.cs.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{})
				})
				// No controller makes a replicaset of the deployment: one of
				// the test's own.
				k.apply(t, ns, mixedManifest(pv)+`---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}
    spec:
      containers: [{name: c, image: busybox}]
`)
				if _, err := e.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := e.cs.AppsV1().ControllerRevisions(ns).Create(ctx, &appsv1.ControllerRevision{
					ObjectMeta: metav1.ObjectMeta{Name: "db-1"},
					Data:       runtime.RawExtension{Raw: []byte(`{"spec":{}}`)},
					Revision:   1,
				}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				// The object each table must list (componentstatuses:
				// always present, upstream's fixed list).
				objects := map[string]string{
					"pods": "solo", "nodes": node, "persistentvolumes": pv, "persistentvolumeclaims": "data",
					"podtemplates": "tmpl", "replicationcontrollers": "legacy", "limitranges": "claims",
					"resourcequotas": "generous", "componentstatuses": "scheduler", "deployments": "web",
					"replicasets": "rs", "statefulsets": "db", "daemonsets": "agent", "controllerrevisions": "db-1",
					"jobs": "migrate", "cronjobs": "nightly", "horizontalpodautoscalers": "web", "poddisruptionbudgets": "web",
				}
				for resource, want := range wideHeaders {
					args := []string{"get", resource, "-o", "wide"}
					switch resource {
					case "nodes", "persistentvolumes":
						args = append(args, objects[resource])
					case "componentstatuses":
					default:
						args = append(args, "-n", ns)
					}
					r := k.run(t, "", nil, args...)
					if r.code != 0 {
						t.Errorf("kubectl %s: %s", strings.Join(args, " "), r)
						continue
					}
					cells := tableCells(r.stdout)
					if len(cells) < 2 || !slices.Equal(cells[0], want) {
						t.Errorf("kubectl %s: got\n%s\nwant the header %q and rows", strings.Join(args, " "), r.stdout, want)
						continue
					}
					if !slices.ContainsFunc(cells[1:], func(row []string) bool { return row[0] == objects[resource] }) {
						t.Errorf("kubectl %s: no row for %q in\n%s", strings.Join(args, " "), objects[resource], r.stdout)
					}
				}
			})
		}
	})
}
