package aggregator

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func TestAutoRegistration(t *testing.T) {
	ts := startServer(t, options{noStart: true})
	check := ts.agg.AutoregisterCompletion()
	if got := check.Name(); got != "autoregister-completion" {
		t.Errorf("got check name %q, want autoregister-completion", got)
	}
	req := httptest.NewRequest("GET", "/readyz", nil)
	if err := check.Check(req); err == nil || err.Error() != "missing APIService: [v1. v1.apps]" {
		t.Errorf("before start: got %v, want missing APIService: [v1. v1.apps]", err)
	}
	ts.run(t)
	c := ts.client(t)
	ctx := context.Background()

	// Built-in group-versions: created once, local, Available, "onstart".
	for _, name := range []string{"v1.", "v1.apps"} {
		svc := waitCondition(t, c, name, 10*time.Second, reason("Local"))
		if got := svc.Labels[AutoManagedLabel]; got != "onstart" {
			t.Errorf("%s: got label %q, want onstart", name, got)
		}
		if svc.Spec.Service != nil {
			t.Errorf("%s: got service %+v, want local", name, svc.Spec.Service)
		}
		cond := svc.Status.Conditions[0]
		if cond.Status != "True" || cond.Message != "Local APIServices are always available" {
			t.Errorf("%s: got %+v", name, cond)
		}
	}
	core, _ := c.ApiregistrationV1().APIServices().Get(ctx, "v1.", metav1.GetOptions{})
	if core.Spec.GroupPriorityMinimum != 18000 || core.Spec.VersionPriority != 1 || core.Spec.Group != "" || core.Spec.Version != "v1" {
		t.Errorf("v1.: got spec %+v, want group '' version v1 priorities 18000/1", core.Spec)
	}
	if _, err := c.ApiregistrationV1().APIServices().Get(ctx, "v1.apiregistration.k8s.io", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("v1.apiregistration.k8s.io: got %v, want NotFound (never auto-registered)", err)
	}
	eventually(t, 10*time.Second, func() error { return check.Check(req) })

	// A user's APIService for a group-version the chain serves, without
	// the label: left alone throughout.
	user := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v2.gadgets.example.com"},
		Spec:       apiregistrationv1.APIServiceSpec{Group: "gadgets.example.com", Version: "v2", GroupPriorityMinimum: 5, VersionPriority: 5},
	}
	if _, err := c.ApiregistrationV1().APIServices().Create(ctx, user, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// CRD group-versions come and go.
	crd := schema.GroupVersion{Group: "widgets.example.com", Version: "v1beta1"}
	gadgets := schema.GroupVersion{Group: "gadgets.example.com", Version: "v2"}
	for _, gv := range []schema.GroupVersion{crd, gadgets} {
		if err := ts.disc.AddGroupVersion(gv, nil); err != nil {
			t.Fatal(err)
		}
	}
	svc := waitCondition(t, c, "v1beta1.widgets.example.com", 10*time.Second, reason("Local"))
	if got := svc.Labels[AutoManagedLabel]; got != "true" {
		t.Errorf("CRD APIService: got label %q, want true", got)
	}
	if svc.Spec.GroupPriorityMinimum != 1000 || svc.Spec.VersionPriority != 100 {
		t.Errorf("CRD APIService: got priorities %d/%d, want 1000/100", svc.Spec.GroupPriorityMinimum, svc.Spec.VersionPriority)
	}
	// Drift is repaired.
	svc.Spec.VersionPriority = 7
	if _, err := c.ApiregistrationV1().APIServices().Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		got, err := c.ApiregistrationV1().APIServices().Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil || got.Spec.VersionPriority != 100 {
			return fmt.Errorf("got %v %v, want versionPriority 100 again", err, got)
		}
		return nil
	})

	// A deleted built-in APIService comes back, still "onstart" and
	// local (upstream leaves it deleted until a restart:
	// kubernetes/kubernetes#75704; kapi recreates it).
	apps, err := c.ApiregistrationV1().APIServices().Get(ctx, "v1.apps", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ApiregistrationV1().APIServices().Delete(ctx, "v1.apps", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		got, err := c.ApiregistrationV1().APIServices().Get(ctx, "v1.apps", metav1.GetOptions{})
		if err != nil || got.UID == apps.UID {
			return fmt.Errorf("got %v (same object: %v), want v1.apps recreated", err, err == nil)
		}
		return nil
	})
	recreated := waitCondition(t, c, "v1.apps", 10*time.Second, reason("Local"))
	if recreated.Labels[AutoManagedLabel] != ManageOnStart || !equality.Semantic.DeepEqual(recreated.Spec, apps.Spec) {
		t.Errorf("recreated v1.apps: got label %q spec %+v, want onstart %+v", recreated.Labels[AutoManagedLabel], recreated.Spec, apps.Spec)
	}

	ts.disc.RemoveGroupVersion(crd)
	ts.disc.RemoveGroupVersion(gadgets)
	eventually(t, 10*time.Second, func() error {
		_, err := c.ApiregistrationV1().APIServices().Get(ctx, "v1beta1.widgets.example.com", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("got %v, want NotFound", err)
		}
		return nil
	})
	got, err := c.ApiregistrationV1().APIServices().Get(ctx, user.Name, metav1.GetOptions{})
	if err != nil || got.Spec.VersionPriority != 5 || got.Labels[AutoManagedLabel] != "" {
		t.Errorf("user's APIService: got %v %+v, want it untouched", err, got)
	}

	// OnChange saw the CRD's APIService come and go (its last call may
	// come just after the deletion is visible through the API).
	eventually(t, 10*time.Second, func() error {
		ts.changesMu.Lock()
		defer ts.changesMu.Unlock()
		var sawCRD bool
		for _, names := range ts.changes {
			sawCRD = sawCRD || slices.Contains(names, "v1beta1.widgets.example.com")
		}
		last := ts.changes[len(ts.changes)-1]
		if !sawCRD || slices.Contains(last, "v1beta1.widgets.example.com") {
			return fmt.Errorf("OnChange: saw CRD %v, last %v; want seen then gone", sawCRD, last)
		}
		return nil
	})
}

func TestDiscoveryAndTable(t *testing.T) {
	ts := startServer(t, options{})
	dc, err := discovery.NewDiscoveryClientForConfig(ts.config())
	if err != nil {
		t.Fatal(err)
	}
	groups, resources, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, g := range groups {
		found = found || g.Name == "apiregistration.k8s.io" && g.PreferredVersion.Version == "v1"
	}
	if !found {
		t.Errorf("aggregated discovery: apiregistration.k8s.io/v1 not among %d groups", len(groups))
	}
	var res *metav1.APIResource
	for _, l := range resources {
		if l.GroupVersion != "apiregistration.k8s.io/v1" {
			continue
		}
		for i := range l.APIResources {
			if l.APIResources[i].Name == "apiservices" {
				res = &l.APIResources[i]
			}
		}
	}
	if res == nil || res.Namespaced || !slices.Equal(res.Categories, []string{"api-extensions"}) || res.Kind != "APIService" {
		t.Errorf("got apiservices resource %+v, want cluster-scoped kind APIService in api-extensions", res)
	}

	// Legacy discovery of the group root.
	resp, err := ts.httpClient(false).Get(ts.srv.URL + "/apis/apiregistration.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /apis/apiregistration.k8s.io: got %d, want 200", resp.StatusCode)
	}

	// The table kubectl prints.
	waitCondition(t, ts.client(t), "v1.apps", 10*time.Second, reason("Local"))
	tbl := &metav1.Table{}
	err = ts.client(t).ApiregistrationV1().RESTClient().Get().Resource("apiservices").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(context.Background()).Into(tbl)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if want := []string{"Name", "Service", "Available", "Age"}; !slices.Equal(cols, want) {
		t.Errorf("got columns %v, want %v", cols, want)
	}
	var row []any
	for _, r := range tbl.Rows {
		if r.Cells[0] == "v1.apps" {
			row = r.Cells
		}
	}
	if len(row) != 4 || row[1] != "Local" || row[2] != "True" {
		t.Errorf("got row %v, want v1.apps Local True", row)
	}
}
