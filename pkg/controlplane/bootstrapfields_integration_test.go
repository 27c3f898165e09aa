package controlplane_test

import (
	"encoding/json"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestBootstrapManagedFields checks the managed fields of the system
// namespaces, the priority classes and the automanaged APIServices the
// bootstrap hooks and the autoregistration create against
// kube-apiserver v1.37.2's (`kubectl get namespace default -o json
// --show-managed-fields`, and the same for the others): one Update by
// kube-apiserver of the fields the hook's request sets.
func TestBootstrapManagedFields(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	check := func(what string, mf []metav1.ManagedFieldsEntry, apiVersion, fields string) {
		t.Helper()
		if len(mf) != 1 || mf[0].Manager != "kube-apiserver" || mf[0].Operation != metav1.ManagedFieldsOperationUpdate ||
			mf[0].Subresource != "" || mf[0].APIVersion != apiVersion || mf[0].Time == nil || mf[0].FieldsV1 == nil || string(mf[0].FieldsV1.Raw) != fields {
			t.Errorf("%s: managed fields %+v, want one Update by kube-apiserver (%s) of %s", what, mf, apiVersion, fields)
		}
	}
	for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check("namespace "+name, ns.ManagedFields, "v1", `{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}`)
	}
	for _, name := range []string{"system-node-critical", "system-cluster-critical"} {
		pc, err := cs.SchedulingV1().PriorityClasses().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check("priorityclass "+name, pc.ManagedFields, "scheduling.k8s.io/v1", `{"f:description":{},"f:preemptionPolicy":{},"f:value":{}}`)
	}
	const apiServiceFields = `{"f:metadata":{"f:labels":{".":{},"f:kube-aggregator.kubernetes.io/automanaged":{}}},"f:spec":{%s"f:groupPriorityMinimum":{},"f:version":{},"f:versionPriority":{}}}`
	for name, group := range map[string]string{"v1.": "", "v1.apps": `"f:group":{},`, "v2.autoscaling": `"f:group":{},`} {
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices", name).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var svc apiregistrationv1.APIService
		if err := json.Unmarshal(raw, &svc); err != nil {
			t.Fatal(err)
		}
		// The legacy group's empty name is omitted, so not owned.
		check("apiservice "+name, svc.ManagedFields, "apiregistration.k8s.io/v1", fmt.Sprintf(apiServiceFields, group))
	}
}
