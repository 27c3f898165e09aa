package resourcequota

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestResourceQuotaStore(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("", "v1", "resourcequotas", "default")
	if !slices.Equal(store.ShortNames(), []string{"quota"}) {
		t.Errorf("got short names %v, want [quota]", store.ShortNames())
	}
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "mem-cpu-demo"},
		Spec:       corev1.ResourceQuotaSpec{Hard: list("requests.cpu", "1", "limits.cpu", "2")},
		Status:     corev1.ResourceQuotaStatus{Used: list("requests.cpu", "5")},
	}
	obj, err := store.Create(ctx, q, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := obj.(*corev1.ResourceQuota); len(got.Status.Used) != 0 {
		t.Errorf("got status %+v, want it cleared", got.Status)
	}
	// /status writes the usage; the main resource keeps it.
	upd := obj.(*corev1.ResourceQuota).DeepCopy()
	upd.Status = corev1.ResourceQuotaStatus{Hard: list("requests.cpu", "1", "limits.cpu", "2"), Used: list("requests.cpu", "500m", "limits.cpu", "0")}
	upd.Spec.Hard = list("pods", "1")
	obj, _, err = status.Update(ctx, q.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	if got := obj.(*corev1.ResourceQuota); len(got.Status.Used) != 2 || len(got.Spec.Hard) != 2 {
		t.Errorf("got spec %v, status %v; want the status written and the spec kept", got.Spec.Hard, got.Status.Used)
	}
	upd = obj.(*corev1.ResourceQuota).DeepCopy()
	upd.Status = corev1.ResourceQuotaStatus{}
	upd.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	_, _, err = store.Update(ctx, q.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	// The scope is unfit for both cpu resources, reported once as the
	// message is the same (kube-apiserver v1.37.2 answers these two).
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid spec.scopes", "FieldValueInvalid spec.scopes"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v (scope unfit, and immutable)", got, want)
	}
}

func TestResourceQuotaTable(t *testing.T) {
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "mem-cpu-demo", CreationTimestamp: metav1.NewTime(time.Now().Add(-3 * time.Minute))},
		Status: corev1.ResourceQuotaStatus{
			Hard: list("requests.cpu", "1", "requests.memory", "1Gi", "limits.cpu", "2", "limits.memory", "2Gi", "pods", "10"),
			Used: list("requests.cpu", "500m", "limits.memory", "1Gi"),
		},
	}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	// Upstream's printResourceQuota columns (pkg/printers/internalversion/printers.go).
	if want := []string{"Name", "Request", "Limit", "Age"}; !slices.Equal(names, want) {
		t.Errorf("got columns %v, want %v", names, want)
	}
	want := []any{"mem-cpu-demo", "pods: 0/10, requests.cpu: 500m/1, requests.memory: 0/1Gi", "limits.cpu: 0/2, limits.memory: 1Gi/2Gi", "3m"}
	if got := tbl.Rows[0].Cells; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
}
