package controlplane

import (
	"context"
	"log/slog"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/priorityclass"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/servicecidr"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// The system priority classes are created when missing, at every start
// (the hook runs bootstrapPriorityClasses), with upstream's values and
// the defaulted preemptionPolicy; existing ones are left as they are.
func TestBootstrapPriorityClasses(t *testing.T) {
	pcs, err := priorityclass.NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pcs.Destroy()
	ctx := systemContext(t.Context(), "")
	logger := slog.New(slog.DiscardHandler)
	if err := bootstrapPriorityClasses(t.Context(), pcs, logger); err != nil {
		t.Fatal(err)
	}
	want := map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
	for name, value := range want {
		obj, err := pcs.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pc := obj.(*schedulingv1.PriorityClass)
		if pc.Value != value || pc.GlobalDefault || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != "PreemptLowerPriority" || pc.Description == "" {
			t.Errorf("%s: %+v", name, pc)
		}
	}
	// The API refuses to delete them.
	_, _, err = pcs.Delete(ctx, "system-node-critical", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != `priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted` {
		t.Errorf("delete a system class: %v", err)
	}
	// One gone (removed from storage behind the API's back) is made again
	// at the next start; a second run changes nothing else.
	if _, _, err := pcs.Store.Delete(ctx, "system-node-critical", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := pcs.Get(ctx, "system-cluster-critical", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bootstrapPriorityClasses(t.Context(), pcs, logger); err != nil {
		t.Fatal(err)
	}
	if _, err := pcs.Get(ctx, "system-node-critical", &metav1.GetOptions{}); err != nil {
		t.Errorf("not recreated: %v", err)
	}
	after, err := pcs.Get(ctx, "system-cluster-critical", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if before.(*schedulingv1.PriorityClass).ResourceVersion != after.(*schedulingv1.PriorityClass).ResourceVersion {
		t.Error("an existing system class was rewritten")
	}
}

// The "kubernetes" ServiceCIDR: created with the service range, marked
// Ready (no reason, upstream's message), recreated after a delete, and
// left alone when its CIDRs are not this server's.
func TestDefaultServiceCIDR(t *testing.T) {
	st, status, err := servicecidr.NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Destroy()
	d := &defaultServiceCIDR{store: st, status: status, cidrs: []string{"10.0.0.0/24"}, logger: slog.New(slog.DiscardHandler)}
	ctx := systemContext(t.Context(), "")
	get := func() *networkingv1.ServiceCIDR {
		t.Helper()
		obj, err := st.Get(ctx, DefaultServiceCIDRName, &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*networkingv1.ServiceCIDR)
	}
	d.sync(t.Context())
	sc := get()
	cond := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	if len(sc.Spec.CIDRs) != 1 || sc.Spec.CIDRs[0] != "10.0.0.0/24" || cond == nil || cond.Status != metav1.ConditionTrue ||
		cond.Message != "Kubernetes default Service CIDR is ready" || cond.LastTransitionTime.IsZero() {
		t.Fatalf("default ServiceCIDR %+v", sc)
	}
	rv := sc.ResourceVersion
	d.sync(t.Context())
	if get().ResourceVersion != rv {
		t.Error("a settled ServiceCIDR was written again")
	}
	if _, _, err := st.Delete(ctx, DefaultServiceCIDRName, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	d.sync(t.Context())
	if !apimeta.IsStatusConditionTrue(get().Status.Conditions, networkingv1.ServiceCIDRConditionReady) {
		t.Error("not recreated Ready")
	}
	// Another server's range: no Ready condition is added.
	if _, _, err := st.Delete(ctx, DefaultServiceCIDRName, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	other := &defaultServiceCIDR{store: st, status: status, cidrs: []string{"10.96.0.0/12"}, logger: d.logger}
	other.sync(context.Background())
	d.sync(t.Context())
	if c := get(); c.Spec.CIDRs[0] != "10.96.0.0/12" || len(c.Status.Conditions) != 1 {
		t.Errorf("after a mismatch: %+v", c)
	}
}
