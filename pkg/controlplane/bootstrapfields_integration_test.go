package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
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

// TestServerMadeNetworkingManagedFields checks the managed fields of the
// networking objects the server makes itself against kube-apiserver
// v1.37.2's (`kubectl get service kubernetes -o json --show-managed-fields`,
// the same for the ServiceCIDR "kubernetes", the IPAddress 10.0.0.1 and
// the IPAddress of a Service made with `kubectl create service clusterip
// s1 --tcp=80`; times aside): Updates by kube-apiserver, which creates
// them through its loopback client, and the Ready condition applied to
// the ServiceCIDR's status by kubernetes-service-cidr-controller.
func TestServerMadeNetworkingManagedFields(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	type entry struct{ manager, operation, apiVersion, subresource, fields string }
	check := func(what string, mf []metav1.ManagedFieldsEntry, want ...entry) {
		t.Helper()
		var got []entry
		for _, e := range mf {
			if e.Time == nil || e.FieldsType != "FieldsV1" || e.FieldsV1 == nil {
				t.Errorf("%s: entry %+v has no time or fields", what, e)
				continue
			}
			got = append(got, entry{e.Manager, string(e.Operation), e.APIVersion, e.Subresource, string(e.FieldsV1.Raw)})
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: managed fields\n got  %v\n want %v", what, got, want)
		}
	}
	svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("service kubernetes", svc.ManagedFields, entry{"kube-apiserver", "Update", "v1", "",
		`{"f:metadata":{"f:labels":{".":{},"f:component":{},"f:provider":{}}},"f:spec":{"f:clusterIP":{},"f:internalTrafficPolicy":{},"f:ipFamilyPolicy":{},` +
			`"f:ports":{".":{},"k:{\"port\":443,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{},"f:targetPort":{}}},"f:sessionAffinity":{},"f:type":{}}}`})

	// The Ready condition is applied by a post-start hook's controller.
	var cidr *networkingv1.ServiceCIDR
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cidr, err = cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil && len(cidr.Status.Conditions) > 0, err
	}); err != nil {
		t.Fatalf("ServiceCIDR kubernetes not Ready: %v", err)
	}
	check("servicecidr kubernetes", cidr.ManagedFields,
		entry{"kubernetes-service-cidr-controller", "Apply", "networking.k8s.io/v1", "status",
			`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:status":{},"f:type":{}}}}}`},
		entry{"kube-apiserver", "Update", "networking.k8s.io/v1", "", `{"f:spec":{"f:cidrs":{}}}`})

	s1, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "s1"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const ipFields = `{"f:metadata":{"f:labels":{".":{},"f:ipaddress.kubernetes.io/ip-family":{},"f:ipaddress.kubernetes.io/managed-by":{}}},` +
		`"f:spec":{"f:parentRef":{".":{},"f:name":{},"f:namespace":{},"f:resource":{}}}}`
	for _, ip := range []string{svc.Spec.ClusterIP, s1.Spec.ClusterIP} {
		addr, err := cs.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check("ipaddress "+ip, addr.ManagedFields, entry{"kube-apiserver", "Update", "networking.k8s.io/v1", "", ipFields})
	}
}
