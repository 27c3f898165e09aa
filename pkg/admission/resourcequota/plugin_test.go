package resourcequota

import (
	"context"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// quotaMap holds quotas in memory with resourceVersions, refusing stale
// writes with a conflict as the store does.
type quotaMap struct {
	mu     sync.Mutex
	quotas map[string]corev1.ResourceQuota
	writes int
}

func (m *quotaMap) List(_ context.Context, ns string) ([]corev1.ResourceQuota, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []corev1.ResourceQuota
	for _, q := range m.quotas {
		if q.Namespace == ns {
			out = append(out, *q.DeepCopy())
		}
	}
	return out, nil
}

func (m *quotaMap) UpdateStatus(_ context.Context, q *corev1.ResourceQuota) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.quotas[q.Name]
	if cur.ResourceVersion != q.ResourceVersion {
		return apierrors.NewConflict(corev1.Resource("resourcequotas"), q.Name, nil)
	}
	rv, _ := strconv.Atoi(cur.ResourceVersion)
	cur.Status = *q.Status.DeepCopy()
	cur.ResourceVersion = strconv.Itoa(rv + 1)
	m.quotas[q.Name] = cur
	m.writes++
	return nil
}

func newQuota(name string, hard, used corev1.ResourceList) corev1.ResourceQuota {
	return corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

// TestServiceUpdateAndDryRun: a service turned NodePort is charged its
// node ports on update (upstream's service evaluator handles updates); a
// dry run checks without charging; a quota whose status does not know a
// limited resource refuses (upstream's "status unknown for quota").
func TestServiceUpdateAndDryRun(t *testing.T) {
	m := &quotaMap{quotas: map[string]corev1.ResourceQuota{
		"svc": newQuota("svc", corev1.ResourceList{"services.nodeports": q("1"), "services": q("5")}, corev1.ResourceList{"services.nodeports": q("0"), "services": q("1")}),
	}}
	p := New(m)
	svcs := corev1.SchemeGroupVersion.WithResource("services")
	old := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443}}}}
	upd := old.DeepCopy()
	upd.Spec.Type = corev1.ServiceTypeNodePort
	err := p.Validate(context.Background(), admission.Attributes{Operation: admission.Update, Resource: svcs, Namespace: "ns", Name: "web", Object: upd, OldObject: old})
	if want := `services "web" is forbidden: exceeded quota: svc, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1`; err == nil || err.Error() != want || !apierrors.IsForbidden(err) {
		t.Errorf("got %v, want %s", err, want)
	}
	// An update that charges nothing more passes without a write.
	if err := p.Validate(context.Background(), admission.Attributes{Operation: admission.Update, Resource: svcs, Namespace: "ns", Name: "web", Object: old, OldObject: old}); err != nil || m.writes != 0 {
		t.Errorf("no-op update: %v, %d writes", err, m.writes)
	}
	create := admission.Attributes{Operation: admission.Create, Resource: svcs, Namespace: "ns", Name: "api", Object: old, DryRun: true}
	if err := p.Validate(context.Background(), create); err != nil || m.writes != 0 {
		t.Errorf("dry run: %v, %d writes", err, m.writes)
	}
	create.DryRun = false
	if err := p.Validate(context.Background(), create); err != nil || m.writes != 1 {
		t.Errorf("create: %v, %d writes", err, m.writes)
	}
	if used := m.quotas["svc"].Status.Used["services"]; used.Value() != 2 {
		t.Errorf("services used %s, want 2", used.String())
	}
	// Unknown usage for a limited resource.
	m.quotas["cms"] = newQuota("cms", corev1.ResourceList{"configmaps": q("1")}, nil)
	err = p.Validate(context.Background(), admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns", Name: "c", Object: &corev1.ConfigMap{}})
	if want := `configmaps "c" is forbidden: status unknown for quota: cms, resources: configmaps`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
