package lease

import (
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func TestLeaseStore(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	if got := store.ShortNames(); len(got) != 0 {
		t.Errorf("got short names %v, want none", got)
	}
	ctx := registrytest.Context("coordination.k8s.io", "v1", "leases", "kube-node-lease")
	holder := "node-1"
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: ptr(int32(40))},
	}

	// Leader election creates leases with PUT.
	obj, created, err := store.Update(ctx, "node-1", registrytest.Updated{Obj: lease}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil || !created {
		t.Fatalf("PUT a new lease: created=%v err=%v, want created", created, err)
	}

	// Updates must name a resourceVersion: a lease is a lock.
	renewed := obj.(*coordinationv1.Lease).DeepCopy()
	renewed.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	renewed.ResourceVersion = ""
	_, _, err = store.Update(ctx, "node-1", registrytest.Updated{Obj: renewed}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid metadata.resourceVersion"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	bad := lease.DeepCopy()
	bad.Name = "node-2"
	bad.Spec.LeaseDurationSeconds = ptr(int32(0))
	_, err = store.Create(ctx, bad, nil, &metav1.CreateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid spec.leaseDurationSeconds"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
}

func TestLeaseTable(t *testing.T) {
	l := &coordinationv1.LeaseList{Items: []coordinationv1.Lease{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Hour))}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("me")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Hour))}},
	}}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), l, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if got, want := strings.Join(cols, ","), "Name,Holder,Age"; got != want {
		t.Errorf("got columns %s, want %s", got, want)
	}
	if got, want := tbl.Rows[0].Cells, []any{"a", "me", "60m"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
	if got, want := tbl.Rows[1].Cells, []any{"b", "", "60m"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// TestLeaseCoordinationFieldsDropped: with CoordinatedLeaderElection off
// (v1.37's default), kube-apiserver v1.37.2 stores a Lease created with
// strategy and preferredHolder without them, and so does not validate them
// (a Bogus strategy is no error).
func TestLeaseCoordinationFieldsDropped(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("coordination.k8s.io", "v1", "leases", "ns")
	strategy := coordinationv1.CoordinatedLeaseStrategy("Bogus")
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "ns"},
		Spec:       coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr(int32(1)), Strategy: &strategy, PreferredHolder: ptr("x")},
	}
	obj, err := store.Create(ctx, l, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*coordinationv1.Lease).Spec; got.Strategy != nil || got.PreferredHolder != nil {
		t.Errorf("stored spec %+v, want no strategy or preferredHolder", got)
	}
}
