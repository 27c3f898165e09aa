package e2e

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mixedManifest is one multi-document manifest with an object of every
// workload-issue group and most of its kinds: core (a Pod, a pod
// template, a replication controller, a claim, limits, a quota, a
// configmap, a service), apps, batch, autoscaling and policy. pv names a
// cluster-scoped PersistentVolume unique to the test.
func mixedManifest(pv string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: fast}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: ` + pv + `}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/` + pv + `}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: LimitRange
metadata: {name: claims}
spec:
  limits: [{type: PersistentVolumeClaim, max: {storage: 10Gi}}]
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: generous}
spec:
  hard: {pods: "100", configmaps: "100"}
---
apiVersion: v1
kind: Pod
metadata: {name: solo, labels: {app: solo}}
spec:
  containers: [{name: c, image: busybox, command: [sleep, "3600"]}]
---
apiVersion: v1
kind: PodTemplate
metadata: {name: tmpl}
template:
  metadata: {labels: {app: tmpl}}
  spec:
    containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  replicas: 1
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec:
      containers: [{name: c, image: nginx}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports: [{containerPort: 80}]
        envFrom: [{configMapRef: {name: settings}}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres:16}]
  volumeClaimTemplates:
  - metadata: {name: pgdata}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: fluentd}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: busybox, command: ["true"]}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: nightly, image: busybox}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 6
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
`
}

// mixedObjects are the objects of mixedManifest as kubectl names them, in
// manifest order.
func mixedObjects(pv string) []string {
	return []string{
		"configmap/settings", "persistentvolume/" + pv, "persistentvolumeclaim/data", "limitrange/claims",
		"resourcequota/generous", "pod/solo", "podtemplate/tmpl", "replicationcontroller/legacy",
		"deployment.apps/web", "service/web", "statefulset.apps/db", "daemonset.apps/agent",
		"job.batch/migrate", "cronjob.batch/nightly", "horizontalpodautoscaler.autoscaling/web",
		"poddisruptionbudget.policy/web",
	}
}

// TestKubectlApplyMixedManifest applies one multi-document manifest that
// mixes every group of the built-in workload API with kubectl 1.27 and
// 1.33 on both backends: everything is created; applied again, only what
// kubectl reports as configured against kube-apiserver too (the server's
// defaults make no other difference); server-side apply of the same
// manifest leaves it unchanged too; get -f lists each object; delete -f
// removes them all.
func TestKubectlApplyMixedManifest(t *testing.T) {
	binaries := kubectlPair(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bin := range binaries {
			t.Run(filepath.Base(bin), func(t *testing.T) {
				t.Parallel()
				k := newKC(t, e, bin)
				ns := e.newNamespace(t)
				pv := "pv-" + ns
				objects := mixedObjects(pv)
				file := writeFile(t, k.dir, "mixed.yaml", mixedManifest(pv))
				t.Cleanup(func() { k.run(t, "", nil, "delete", "persistentvolume", pv, "--ignore-not-found") })

				want := func(verb string) string {
					var b strings.Builder
					for _, o := range objects {
						b.WriteString(o + " " + verb + "\n")
					}
					return b.String()
				}
				if out := k.ok(t, "-n", ns, "apply", "-f", file); out != want("created") {
					t.Errorf("first apply: got\n%s\nwant\n%s", out, want("created"))
				}
				// Applied again, kubectl reports two objects configured, as
				// against kube-apiserver: it computes the patch itself, and
				// it always holds a PodDisruptionBudget's selector (its
				// patchStrategy is "replace") and a StatefulSet's
				// volumeClaimTemplates (an atomic list, which the server
				// stores defaulted: volumeMode, status.phase).
				again := strings.NewReplacer(
					"statefulset.apps/db unchanged", "statefulset.apps/db configured",
					"poddisruptionbudget.policy/web unchanged", "poddisruptionbudget.policy/web configured",
				).Replace(want("unchanged"))
				if out := k.ok(t, "-n", ns, "apply", "-f", file); out != again {
					t.Errorf("second apply: got\n%s\nwant\n%s", out, again)
				}
				if out := k.ok(t, "-n", ns, "apply", "--server-side", "--force-conflicts", "-f", file); out != want("serverside-applied") {
					t.Errorf("server-side apply: got\n%s\nwant\n%s", out, want("serverside-applied"))
				}
				// get -f prints one table per kind; every object is in one.
				got := k.ok(t, "-n", ns, "get", "-f", file, "-o", "name")
				if lines := strings.Fields(got); !slices.Equal(lines, objects) {
					t.Errorf("get -f -o name: got %q, want %q", lines, objects)
				}
				if out := k.ok(t, "-n", ns, "get", "-f", file); !regexp.MustCompile(`(?m)^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$`).MatchString(out) {
					t.Errorf("get -f: no deployment table in\n%s", out)
				}
				out := k.ok(t, "-n", ns, "delete", "-f", file, "--wait=false")
				for _, o := range objects {
					if !strings.Contains(out, o+` deleted`) && !strings.Contains(out, strings.Replace(o, "/", ` "`, 1)+`" deleted`) {
						t.Errorf("delete -f: %s not reported deleted in\n%s", o, out)
					}
				}
			})
		}
	})
}
