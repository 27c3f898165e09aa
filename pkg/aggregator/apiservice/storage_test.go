package apiservice

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func TestStore(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	if got, want := store.Categories(), []string{"api-extensions"}; !slices.Equal(got, want) {
		t.Errorf("got categories %v, want %v", got, want)
	}
	if got := store.ShortNames(); len(got) != 0 {
		t.Errorf("got short names %v, want none", got)
	}
	if store.NamespaceScoped() {
		t.Error("got namespaced, want cluster-scoped")
	}
	ctx := registrytest.Context("apiregistration.k8s.io", "v1", "apiservices", "")

	// A local APIService is Available at once; the status sent is dropped.
	l := local(nil)
	l.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: "Bogus", Status: "True"}}
	obj, err := store.Create(ctx, l, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*apiregistrationv1.APIService)
	if c := Condition(got, apiregistrationv1.Available); c == nil || c.Status != "True" || c.Reason != "Local" || c.Message != "Local APIServices are always available" {
		t.Errorf("got Available %+v, want True Local", c)
	}
	if len(got.Status.Conditions) != 1 {
		t.Errorf("got conditions %+v, want only Available", got.Status.Conditions)
	}

	// A remote one gets its port defaulted and no condition.
	r := remote(func(s *apiregistrationv1.APIService) {
		s.Name, s.Spec.Version, s.Spec.Service.Port = "v1beta1.wardle.example.com", "v1beta1", nil
	})
	obj, err = store.Create(ctx, r, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got = obj.(*apiregistrationv1.APIService)
	if got.Spec.Service.Port == nil || *got.Spec.Service.Port != 443 || len(got.Status.Conditions) != 0 {
		t.Errorf("got port %v conditions %v, want 443 and none", got.Spec.Service.Port, got.Status.Conditions)
	}

	// Validation reaches clients as Invalid causes.
	_, err = store.Create(ctx, remote(func(s *apiregistrationv1.APIService) { s.Name = "wrong.wardle.example.com" }), nil, &metav1.CreateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid metadata.name"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	// The main resource keeps the status; /status keeps the spec.
	upd := got.DeepCopy()
	upd.Spec.VersionPriority = 20
	upd.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: "True"}}
	obj, _, err = store.Update(ctx, upd.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got = obj.(*apiregistrationv1.APIService)
	if got.Spec.VersionPriority != 20 || len(got.Status.Conditions) != 0 {
		t.Errorf("got versionPriority %d conditions %v, want 20 and none", got.Spec.VersionPriority, got.Status.Conditions)
	}
	upd = got.DeepCopy()
	upd.Spec.VersionPriority = 30
	upd.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: "False", Reason: "Nope"}}
	obj, _, err = status.Update(ctx, upd.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got = obj.(*apiregistrationv1.APIService)
	if got.Spec.VersionPriority != 20 || !slices.Equal(got.Status.Conditions, upd.Status.Conditions) {
		t.Errorf("got versionPriority %d conditions %v, want 20 and %v", got.Spec.VersionPriority, got.Status.Conditions, upd.Status.Conditions)
	}
	upd = got.DeepCopy()
	upd.Status.Conditions[0].Status = "Maybe"
	_, _, err = status.Update(ctx, upd.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueNotSupported status.conditions[0].status"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
}

func TestTable(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-time.Hour))
	withCond := func(s *apiregistrationv1.APIService, c apiregistrationv1.APIServiceCondition) *apiregistrationv1.APIService {
		s.CreationTimestamp = created
		s.Status.Conditions = []apiregistrationv1.APIServiceCondition{c}
		return s
	}
	tests := []struct {
		name string
		obj  runtime.Object
		want []any
	}{
		{"local", withCond(local(nil), LocalAvailableCondition(created)), []any{"v1alpha1.wardle.example.com", "Local", "True", "60m"}},
		{"remote failing", withCond(remote(nil), apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: "False", Reason: "ServiceNotFound"}),
			[]any{"v1alpha1.wardle.example.com", "wardle/api", "False (ServiceNotFound)", "60m"}},
		{"false without reason", withCond(remote(nil), apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: "False"}),
			[]any{"v1alpha1.wardle.example.com", "wardle/api", "False", "60m"}},
		{"no condition", func() runtime.Object { s := remote(nil); s.CreationTimestamp = created; return s }(),
			[]any{"v1alpha1.wardle.example.com", "wardle/api", "Unknown", "60m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := TableConvertor.ConvertToTable(context.Background(), tt.obj, nil)
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for _, c := range tbl.ColumnDefinitions {
				cols = append(cols, c.Name)
			}
			if got, want := cols, []string{"Name", "Service", "Available", "Age"}; !slices.Equal(got, want) {
				t.Errorf("got columns %v, want %v", got, want)
			}
			if got := tbl.Rows[0].Cells; !slices.Equal(got, tt.want) {
				t.Errorf("got cells %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSetCondition(t *testing.T) {
	t0, t1 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	svc := remote(nil)
	SetCondition(svc, apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: "False", Reason: "A", LastTransitionTime: t0})
	SetCondition(svc, apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: "False", Reason: "B", LastTransitionTime: t1})
	if c := Condition(svc, apiregistrationv1.Available); c.Reason != "B" || !c.LastTransitionTime.Equal(&t0) {
		t.Errorf("same status: got %+v, want reason B at %v", c, t0)
	}
	SetCondition(svc, apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: "True", Reason: "Passed", LastTransitionTime: t1})
	if c := Condition(svc, apiregistrationv1.Available); c.Status != "True" || !c.LastTransitionTime.Equal(&t1) || !IsAvailable(svc) {
		t.Errorf("flip: got %+v, want True at %v", c, t1)
	}
}
