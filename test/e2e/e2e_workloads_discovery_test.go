package e2e

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// workloadDiscovery is what kube-apiserver v1.37 lists in its legacy
// discovery for each resource and subresource of issue 13's point 1, by
// group-version: "name kind namespaced verbs [group/version of the kind
// when it differs]". Sources: kubernetes/kubernetes api/discovery/
// api__v1.json, apis__apps__v1.json, apis__batch__v1.json,
// apis__autoscaling__v1.json, apis__autoscaling__v2.json,
// apis__policy__v1.json (the verbs the generic registry and each
// subresource's REST type give: pkg/registry/*/storage/storage.go);
// pods/resize is ResizeREST (get, patch, update) of
// pkg/registry/core/pod/storage/storage.go.
var workloadDiscovery = map[string][]string{
	"v1": {
		"pods Pod true " + allVerbs,
		"pods/status Pod true get,patch,update",
		"pods/binding Binding true create",
		"pods/eviction Eviction true create policy/v1",
		"pods/ephemeralcontainers Pod true get,patch,update",
		"pods/resize Pod true get,patch,update",
		"pods/log Pod true get",
		"pods/exec PodExecOptions true create,get",
		"pods/attach PodAttachOptions true create,get",
		"pods/portforward PodPortForwardOptions true create,get",
		"pods/proxy PodProxyOptions true create,delete,get,patch,update",
		"nodes Node false " + allVerbs,
		"nodes/status Node false get,patch,update",
		"nodes/proxy NodeProxyOptions false create,delete,get,patch,update",
		"persistentvolumes PersistentVolume false " + allVerbs,
		"persistentvolumes/status PersistentVolume false get,patch,update",
		"persistentvolumeclaims PersistentVolumeClaim true " + allVerbs,
		"persistentvolumeclaims/status PersistentVolumeClaim true get,patch,update",
		"podtemplates PodTemplate true " + allVerbs,
		"replicationcontrollers ReplicationController true " + allVerbs,
		"replicationcontrollers/status ReplicationController true get,patch,update",
		"replicationcontrollers/scale Scale true get,patch,update autoscaling/v1",
		"limitranges LimitRange true " + allVerbs,
		"resourcequotas ResourceQuota true " + allVerbs,
		"resourcequotas/status ResourceQuota true get,patch,update",
		"componentstatuses ComponentStatus false get,list",
	},
	"apps/v1": {
		"deployments Deployment true " + allVerbs,
		"deployments/status Deployment true get,patch,update",
		"deployments/scale Scale true get,patch,update autoscaling/v1",
		"replicasets ReplicaSet true " + allVerbs,
		"replicasets/status ReplicaSet true get,patch,update",
		"replicasets/scale Scale true get,patch,update autoscaling/v1",
		"statefulsets StatefulSet true " + allVerbs,
		"statefulsets/status StatefulSet true get,patch,update",
		"statefulsets/scale Scale true get,patch,update autoscaling/v1",
		"daemonsets DaemonSet true " + allVerbs,
		"daemonsets/status DaemonSet true get,patch,update",
		"controllerrevisions ControllerRevision true " + allVerbs,
	},
	"batch/v1": {
		"jobs Job true " + allVerbs,
		"jobs/status Job true get,patch,update",
		"cronjobs CronJob true " + allVerbs,
		"cronjobs/status CronJob true get,patch,update",
	},
	"autoscaling/v1": {
		"horizontalpodautoscalers HorizontalPodAutoscaler true " + allVerbs,
		"horizontalpodautoscalers/status HorizontalPodAutoscaler true get,patch,update",
	},
	"autoscaling/v2": {
		"horizontalpodautoscalers HorizontalPodAutoscaler true " + allVerbs,
		"horizontalpodautoscalers/status HorizontalPodAutoscaler true get,patch,update",
	},
	"policy/v1": {
		"poddisruptionbudgets PodDisruptionBudget true " + allVerbs,
		"poddisruptionbudgets/status PodDisruptionBudget true get,patch,update",
	},
}

const allVerbs = "create,delete,deletecollection,get,list,patch,update,watch"

// discoveryLine renders r as workloadDiscovery does.
func discoveryLine(r metav1.APIResource) string {
	verbs := slices.Clone([]string(r.Verbs))
	slices.Sort(verbs)
	line := r.Name + " " + r.Kind + " " + map[bool]string{true: "true", false: "false"}[r.Namespaced] + " " + strings.Join(verbs, ",")
	if r.Group != "" || r.Version != "" {
		line += " " + r.Group + "/" + r.Version
	}
	return line
}

// TestWorkloadDiscovery: every resource and subresource of issue 13's
// point 1 is in the server's discovery, with upstream's kind, scope and
// verbs, on both backends (legacy discovery; aggregated discovery is
// built from the same installed resources).
func TestWorkloadDiscovery(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for gv, want := range workloadDiscovery {
			list, err := e.cs.Discovery().ServerResourcesForGroupVersion(gv)
			if err != nil {
				t.Errorf("discovery of %s: %v", gv, err)
				continue
			}
			got := map[string]string{}
			for _, r := range list.APIResources {
				got[r.Name] = discoveryLine(r)
			}
			for _, w := range want {
				name, _, _ := strings.Cut(w, " ")
				if got[name] != w {
					t.Errorf("%s: got %q, want %q", gv, got[name], w)
				}
			}
		}
	})
}
