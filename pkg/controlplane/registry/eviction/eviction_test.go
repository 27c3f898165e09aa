package eviction

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/poddisruptionbudget"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// podStrategy stands in for the pods resource's strategy: these tests are
// about evictions, not pods. The main resource keeps status; /status keeps
// the rest (generic.StatusStrategy).
type podStrategy struct{}

func (podStrategy) NamespaceScoped() bool                            { return true }
func (podStrategy) PrepareForCreate(context.Context, runtime.Object) {}
func (podStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.Pod).Status = old.(*corev1.Pod).Status
}
func (podStrategy) Validate(context.Context, runtime.Object) field.ErrorList { return nil }
func (podStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}
func (podStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (podStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (podStrategy) Canonicalize(runtime.Object)    {}
func (podStrategy) AllowCreateOnUpdate() bool      { return false }
func (podStrategy) AllowUnconditionalUpdate() bool { return true }

type fixture struct {
	t         *testing.T
	ns        string
	pods      *generic.Store
	podStatus *generic.StatusREST
	pdbs      *generic.Store
	pdbStatus *generic.StatusREST
	rest      *REST
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	opts := registrytest.Options(t)
	pods, err := generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                  func() runtime.Object { return &corev1.Pod{} },
		NewListFunc:              func() runtime.Object { return &corev1.PodList{} },
		DefaultQualifiedResource: corev1.Resource("pods"),
		CreateStrategy:           podStrategy{},
		UpdateStrategy:           podStrategy{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pods.Destroy)
	podStatus := generic.NewStatusREST(pods, generic.StatusStrategy{UpdateStrategy: podStrategy{}})
	pdbs, pdbStatus, err := poddisruptionbudget.NewREST(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pdbs.Destroy)
	r := NewREST(pods, podStatus, pdbs, pdbStatus)
	r.wait = func(context.Context, time.Duration) error { return nil }
	return &fixture{t: t, ns: "ns", pods: pods, podStatus: podStatus, pdbs: pdbs, pdbStatus: pdbStatus, rest: r}
}

func (f *fixture) ctx(resource, name string) context.Context {
	ctx := request.WithNamespace(context.Background(), f.ns)
	info := &request.RequestInfo{IsResourceRequest: true, APIPrefix: "api", APIVersion: "v1", Namespace: f.ns, Resource: resource, Name: name}
	if resource == "pods" && name != "" {
		info.Subresource = "eviction"
	}
	return request.WithRequestInfo(ctx, info)
}

// pod creates a pod in phase, ready or not, labelled app=web, with a
// finalizer if held (so that a deletion leaves it visible).
func (f *fixture) pod(name string, phase corev1.PodPhase, ready, held bool) {
	f.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{"app": "web"}}}
	if held {
		p.Finalizers = []string{"example.com/hold"}
	}
	if _, err := f.pods.Create(f.ctx("pods", ""), p, nil, &metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	_, _, err := f.podStatus.Update(f.ctx("pods", name), name, registrytest.Mutated{Mutate: func(obj runtime.Object) {
		obj.(*corev1.Pod).Status = corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
}

// budget creates a budget selecting app=web and sets its status as its
// controller would (observedGeneration current unless stale).
func (f *fixture) budget(name string, allowed, current, desired int32, stale bool, mutate func(*policyv1.PodDisruptionBudget)) {
	f.t.Helper()
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	if mutate != nil {
		mutate(pdb)
	}
	if _, err := f.pdbs.Create(f.ctx("poddisruptionbudgets", ""), pdb, nil, &metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	_, _, err := f.pdbStatus.Update(f.ctx("poddisruptionbudgets", name), name, registrytest.Mutated{Mutate: func(obj runtime.Object) {
		p := obj.(*policyv1.PodDisruptionBudget)
		p.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: current, DesiredHealthy: desired, ExpectedPods: current}
		if !stale {
			p.Status.ObservedGeneration = p.Generation
		}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) evict(name string, e *policyv1.Eviction, opts *metav1.CreateOptions) (runtime.Object, error) {
	if e == nil {
		e = &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
	}
	return f.rest.Create(f.ctx("pods", name), e, nil, opts)
}

func (f *fixture) getPod(name string) (*corev1.Pod, error) {
	obj, err := f.pods.Get(f.ctx("pods", name), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

func (f *fixture) getBudget(name string) *policyv1.PodDisruptionBudget {
	f.t.Helper()
	obj, err := f.pdbs.Get(f.ctx("poddisruptionbudgets", name), name, &metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return obj.(*policyv1.PodDisruptionBudget)
}

func mustSucceed(t *testing.T, obj runtime.Object, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("evict: %v", err)
	}
	if st, ok := obj.(*metav1.Status); !ok || st.Status != metav1.StatusSuccess {
		t.Fatalf("evict returned %#v, want a Success Status", obj)
	}
}

func wantGone(t *testing.T, f *fixture, name string) {
	t.Helper()
	if _, err := f.getPod(name); !apierrors.IsNotFound(err) {
		t.Errorf("pod %s: got %v, want NotFound after the eviction", name, err)
	}
}

// want429 checks upstream's refusal: 429 TooManyRequests, its message and
// a DisruptionBudget cause with message cause.
func want429(t *testing.T, err error, cause string) {
	t.Helper()
	st := registrytest.Status(t, err)
	if st.Code != http.StatusTooManyRequests || st.Reason != metav1.StatusReasonTooManyRequests {
		t.Fatalf("got %d %s (%v), want 429 TooManyRequests", st.Code, st.Reason, err)
	}
	if st.Message != "Cannot evict pod as it would violate the pod's disruption budget." {
		t.Errorf("got message %q", st.Message)
	}
	if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != policyv1.DisruptionBudgetCause || st.Details.Causes[0].Message != cause {
		t.Errorf("got details %+v, want one DisruptionBudget cause %q", st.Details, cause)
	}
}

func TestEvictWithoutBudgetDeletes(t *testing.T) {
	f := newFixture(t)
	f.pod("a", corev1.PodRunning, true, false)
	obj, err := f.evict("a", nil, &metav1.CreateOptions{})
	mustSucceed(t, obj, err)
	wantGone(t, f, "a")
}

func TestEvictRefusedWhenBudgetAllowsNone(t *testing.T) {
	f := newFixture(t)
	f.pod("a", corev1.PodRunning, true, false)
	f.budget("pdb", 0, 1, 1, false, nil)
	_, err := f.evict("a", nil, &metav1.CreateOptions{})
	want429(t, err, "The disruption budget pdb needs 1 healthy pods and has 1 currently")
	if _, err := f.getPod("a"); err != nil {
		t.Errorf("the refused pod is gone: %v", err)
	}
	if got := f.getBudget("pdb").Status; got.DisruptionsAllowed != 0 || len(got.DisruptedPods) != 0 {
		t.Errorf("a refused eviction changed the budget: %+v", got)
	}
}

func TestEvictConsumesBudget(t *testing.T) {
	f := newFixture(t)
	f.pod("a", corev1.PodRunning, true, true)
	f.pod("b", corev1.PodRunning, true, false)
	f.budget("pdb", 1, 2, 1, false, nil)

	obj, err := f.evict("a", nil, &metav1.CreateOptions{})
	mustSucceed(t, obj, err)
	st := f.getBudget("pdb").Status
	if st.DisruptionsAllowed != 0 {
		t.Errorf("disruptionsAllowed %d after one eviction, want 0", st.DisruptionsAllowed)
	}
	if _, ok := st.DisruptedPods["a"]; !ok || len(st.DisruptedPods) != 1 {
		t.Errorf("disruptedPods %v, want the evicted pod a", st.DisruptedPods)
	}
	cond := apimeta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != policyv1.InsufficientPodsReason {
		t.Errorf("DisruptionAllowed condition %+v, want False/InsufficientPods", cond)
	}
	// The evicted pod (held by a finalizer) is being deleted and carries
	// the DisruptionTarget condition.
	a, err := f.getPod("a")
	if err != nil {
		t.Fatal(err)
	}
	if a.DeletionTimestamp == nil {
		t.Error("the evicted pod is not being deleted")
	}
	var target *corev1.PodCondition
	for i := range a.Status.Conditions {
		if a.Status.Conditions[i].Type == corev1.DisruptionTarget {
			target = &a.Status.Conditions[i]
		}
	}
	if target == nil || target.Status != corev1.ConditionTrue || target.Reason != "EvictionByEvictionAPI" || target.Message != "Eviction API: evicting" {
		t.Errorf("DisruptionTarget condition %+v, want True EvictionByEvictionAPI", target)
	}

	// The budget is spent: the next healthy pod stays.
	_, err = f.evict("b", nil, &metav1.CreateOptions{})
	want429(t, err, "The disruption budget pdb does not allow evicting pods currently")
}

func TestEvictStaleBudget(t *testing.T) {
	f := newFixture(t)
	f.pod("a", corev1.PodRunning, true, false)
	f.budget("pdb", 5, 5, 1, true, nil)
	_, err := f.evict("a", nil, &metav1.CreateOptions{})
	want429(t, err, "The disruption budget pdb is still being processed by the server.")
	if st := registrytest.Status(t, err); st.Details.RetryAfterSeconds != 10 {
		t.Errorf("Retry-After %d, want 10", st.Details.RetryAfterSeconds)
	}
}

func TestEvictIgnoresBudgetForPendingAndTerminalPods(t *testing.T) {
	f := newFixture(t)
	f.budget("pdb", 0, 0, 3, false, nil)
	for _, phase := range []corev1.PodPhase{corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed} {
		name := strings.ToLower(string(phase))
		f.pod(name, phase, false, false)
		obj, err := f.evict(name, nil, &metav1.CreateOptions{})
		mustSucceed(t, obj, err)
		wantGone(t, f, name)
	}
}

func TestEvictUnhealthyPod(t *testing.T) {
	t.Run("AlwaysAllow", func(t *testing.T) {
		f := newFixture(t)
		f.pod("a", corev1.PodRunning, false, false)
		f.budget("pdb", 0, 0, 3, false, func(p *policyv1.PodDisruptionBudget) {
			p.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
		})
		obj, err := f.evict("a", nil, &metav1.CreateOptions{})
		mustSucceed(t, obj, err)
		wantGone(t, f, "a")
		if st := f.getBudget("pdb").Status; len(st.DisruptedPods) != 0 {
			t.Errorf("an unhealthy pod's eviction consumed the budget: %+v", st)
		}
	})
	t.Run("IfHealthyBudget with enough healthy pods", func(t *testing.T) {
		f := newFixture(t)
		f.pod("a", corev1.PodRunning, false, false)
		f.budget("pdb", 0, 2, 2, false, nil)
		obj, err := f.evict("a", nil, &metav1.CreateOptions{})
		mustSucceed(t, obj, err)
		wantGone(t, f, "a")
	})
	t.Run("IfHealthyBudget short of healthy pods", func(t *testing.T) {
		f := newFixture(t)
		f.pod("a", corev1.PodRunning, false, false)
		f.budget("pdb", 0, 1, 2, false, nil)
		_, err := f.evict("a", nil, &metav1.CreateOptions{})
		want429(t, err, "The disruption budget pdb needs 2 healthy pods and has 1 currently")
	})
}

func TestEvictDryRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		eviction *policyv1.Eviction
		opts     *metav1.CreateOptions
	}{
		{name: "request", opts: &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}},
		{name: "deleteOptions", eviction: &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: "a", Namespace: "ns"},
			DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}},
		}, opts: &metav1.CreateOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.pod("a", corev1.PodRunning, true, false)
			f.budget("pdb", 1, 2, 1, false, nil)
			obj, err := f.evict("a", tc.eviction, tc.opts)
			mustSucceed(t, obj, err)
			p, err := f.getPod("a")
			if err != nil {
				t.Fatalf("a dry-run eviction deleted the pod: %v", err)
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.DisruptionTarget {
					t.Errorf("a dry-run eviction set %+v", c)
				}
			}
			if st := f.getBudget("pdb").Status; st.DisruptionsAllowed != 1 || len(st.DisruptedPods) != 0 {
				t.Errorf("a dry-run eviction changed the budget: %+v", st)
			}
		})
	}
}

func TestEvictBadRequests(t *testing.T) {
	f := newFixture(t)
	f.pod("a", corev1.PodRunning, true, false)
	_, err := f.evict("a", &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, &metav1.CreateOptions{})
	if st := registrytest.Status(t, err); st.Code != http.StatusBadRequest || st.Message != "name in URL does not match name in Eviction object" {
		t.Errorf("name mismatch: got %d %q", st.Code, st.Message)
	}
	_, err = f.evict("a", &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: "a"},
		DeleteOptions: &metav1.DeleteOptions{DryRun: []string{"All"}},
	}, &metav1.CreateOptions{DryRun: []string{"Other"}})
	if st := registrytest.Status(t, err); st.Code != http.StatusBadRequest || !strings.Contains(st.Message, "Non-matching dry-run options") {
		t.Errorf("dry-run mismatch: got %d %q", st.Code, st.Message)
	}
	_, err = f.evict("missing", nil, &metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("missing pod: got %v, want NotFound", err)
	}
	if _, err := f.getPod("a"); err != nil {
		t.Errorf("a refused eviction deleted the pod: %v", err)
	}
}

func TestEvictTwoBudgets(t *testing.T) {
	f := newFixture(t)
	f.pod("a", corev1.PodRunning, true, false)
	f.budget("one", 1, 2, 1, false, nil)
	f.budget("two", 1, 2, 1, false, nil)
	_, err := f.evict("a", nil, &metav1.CreateOptions{})
	st := registrytest.Status(t, err)
	if st.Code != http.StatusInternalServerError || st.Message != "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support." {
		t.Errorf("got %d %q", st.Code, st.Message)
	}
}

func TestEvictResourceVersionPrecondition(t *testing.T) {
	f := newFixture(t)
	f.pod("a", corev1.PodRunning, true, false)
	stale := "1"
	_, err := f.evict("a", &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: "a"},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}},
	}, &metav1.CreateOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("stale resourceVersion precondition: got %v, want Conflict", err)
	}
	p, err := f.getPod("a")
	if err != nil {
		t.Fatal(err)
	}
	rv := p.ResourceVersion
	obj, err := f.evict("a", &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: "a"},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}},
	}, &metav1.CreateOptions{})
	mustSucceed(t, obj, err)
	wantGone(t, f, "a")
}

var _ rest.Updater = (*generic.StatusREST)(nil)
