package resourceclaim

import (
	"context"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// gpuClaim is the claim "gpu" in namespace ns of one request of a device
// of class gpu.example.com.
func gpuClaim(request string) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "ns"}, Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
		Requests: []resourcev1.DeviceRequest{{Name: request, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com", AllocationMode: "ExactCount", Count: 1}}},
	}}}
}

// TestClaimLifecycle: status cleared on create and written through
// /status only; the spec is immutable; the STATE column follows upstream's
// resourceClaimState (pkg/printers/internalversion/printers.go, v1.37).
func TestClaimLifecycle(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("resource.k8s.io", "v1", "resourceclaims", "ns")
	in := gpuClaim("gpu")
	in.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}
	out, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := out.(*resourcev1.ResourceClaim)
	if len(c.Status.ReservedFor) != 0 || State(c) != "pending" {
		t.Errorf("created: status %+v state %s", c.Status, State(c))
	}
	_, _, err = store.Update(ctx, "gpu", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*resourcev1.ResourceClaim).Spec.Devices.Requests[0].Exactly.Count = 2
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid spec" {
		t.Errorf("spec update: %s", got)
	}
	out, _, err = status.Update(ctx, "gpu", registrytest.Mutated{Mutate: func(o runtime.Object) {
		c := o.(*resourcev1.ResourceClaim)
		c.Status.Allocation = &resourcev1.AllocationResult{AllocationTimestamp: ptr.To(metav1.Now())}
		c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c = out.(*resourcev1.ResourceClaim)
	c.CreationTimestamp = metav1.NewTime(time.Now().Add(-90 * time.Second))
	tbl, err := TableConvertor.ConvertToTable(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cells := tbl.Rows[0].Cells; cells[0] != "gpu" || cells[1] != "allocated,reserved" || cells[2] != "90s" {
		t.Errorf("cells %v", cells)
	}
	c.DeletionTimestamp = ptr.To(metav1.Now())
	c.Status.Allocation = nil
	if s := State(c); s != "deleted" {
		t.Errorf("deleted claim state %q", s)
	}
}

// TestStatusDropsSkipNodeOperations: kube-apiserver v1.37.2
// (DRAOptionalNodeOperations off by default; probed 2026-11-28 with a
// kubectl patch --subresource=status) drops an allocation result's
// skipNodeOperations from a status write when the stored claim has none.
func TestStatusDropsSkipNodeOperations(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("resource.k8s.io", "v1", "resourceclaims", "ns")
	in := gpuClaim("r")
	if _, err := store.Create(ctx, in, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, _, err := status.Update(ctx, "gpu", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*resourcev1.ResourceClaim).Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
			Results: []resourcev1.DeviceRequestAllocationResult{{Request: "r", Driver: "d.example.com", Pool: "p", Device: "d0", SkipNodeOperations: []resourcev1.SkipNodeOperation{"Prepare"}}},
		}}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := out.(*resourcev1.ResourceClaim).Status.Allocation.Devices.Results
	if len(r) != 1 || r[0].Device != "d0" || r[0].SkipNodeOperations != nil {
		t.Errorf("got results %+v, want d0 without skipNodeOperations", r)
	}
}
