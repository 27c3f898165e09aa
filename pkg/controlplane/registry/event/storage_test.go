package event

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func coreCtx(ns string) context.Context { return registrytest.Context("", "v1", "events", ns) }
func v1Ctx(ns string) context.Context {
	return registrytest.Context("events.k8s.io", "v1", "events", ns)
}

func newStores(t *testing.T) (*generic.Store, *EventsV1REST) {
	t.Helper()
	core, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Destroy)
	return core, NewEventsV1REST(core)
}

// v1Event is a valid events.k8s.io/v1 event.
func v1Event(name string) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: name},
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "example.com/ctrl",
		ReportingInstance:   "ctrl-1",
		Action:              "Reconcile",
		Reason:              "Synced",
		Regarding:           corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "app"},
		Note:                "synced",
		Type:                corev1.EventTypeNormal,
	}
}

func TestEventsInBothGroups(t *testing.T) {
	core, v1 := newStores(t)
	if !slices.Equal(core.ShortNames(), []string{"ev"}) || !slices.Equal(v1.ShortNames(), []string{"ev"}) {
		t.Errorf("got short names %v and %v, want [ev] for both", core.ShortNames(), v1.ShortNames())
	}

	// An old-style core/v1 event (kubectl, old recorders).
	legacy := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "pod.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"},
		Reason:         "Started",
		Message:        "started",
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
		Count:          1,
		Type:           corev1.EventTypeNormal,
	}
	if _, err := core.Create(coreCtx("default"), legacy, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("core create: %v", err)
	}
	// The same through events.k8s.io/v1 is strict.
	_, err := v1.Create(v1Ctx("default"), ToEventsV1(legacy), nil, &metav1.CreateOptions{})
	want := []string{"FieldValueRequired eventTime", "FieldValueInvalid count", "FieldValueInvalid source"}
	if got := registrytest.Causes(t, err); !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	if msg := registrytest.Status(t, err).Message; !strings.HasPrefix(msg, `Event "pod.1" is invalid`) {
		t.Errorf("got message %q", msg)
	}

	// A new-style event through events.k8s.io/v1 is read back through both.
	admitted := 0
	out, err := v1.Create(v1Ctx("default"), v1Event("app.1"), func(_ context.Context, obj runtime.Object) error {
		if _, ok := obj.(*eventsv1.Event); !ok {
			t.Errorf("admission got %T, want *eventsv1.Event", obj)
		}
		admitted++
		return nil
	}, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("v1 create: %v", err)
	}
	if admitted != 1 {
		t.Errorf("got %d admission calls, want 1", admitted)
	}
	if e, ok := out.(*eventsv1.Event); !ok || e.Note != "synced" || e.UID == "" {
		t.Fatalf("got %#v, want the created events.k8s.io/v1 event", out)
	}
	obj, err := core.Get(coreCtx("default"), "app.1", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e := obj.(*corev1.Event); e.Message != "synced" || e.InvolvedObject.Name != "app" || e.ReportingController != "example.com/ctrl" {
		t.Errorf("got core event %+v, want the converted fields", e)
	}
	obj, err = v1.Get(v1Ctx("default"), "pod.1", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e := obj.(*eventsv1.Event); e.Regarding.Name != "web" || e.DeprecatedSource.Component != "kubelet" || e.DeprecatedCount != 1 {
		t.Errorf("got v1 event %+v, want the legacy fields as deprecated ones", e)
	}

	// Field selectors in each group's names.
	names := func(obj runtime.Object) []string {
		var out []string
		switch l := obj.(type) {
		case *corev1.EventList:
			for _, e := range l.Items {
				out = append(out, e.Name)
			}
		case *eventsv1.EventList:
			for _, e := range l.Items {
				out = append(out, e.Name)
			}
		}
		return out
	}
	list, err := v1.List(v1Ctx(""), &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("regarding.kind", "Pod")})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(list); !slices.Equal(got, []string{"pod.1"}) {
		t.Errorf("got %v for regarding.kind=Pod, want [pod.1]", got)
	}
	list, err = v1.List(v1Ctx("default"), &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("reportingController", "example.com/ctrl")})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(list); !slices.Equal(got, []string{"app.1"}) {
		t.Errorf("got %v for reportingController, want [app.1]", got)
	}
	list, err = core.List(coreCtx("default"), &metainternalversion.ListOptions{FieldSelector: fields.ParseSelectorOrDie("source=kubelet,type=Normal")})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(list); !slices.Equal(got, []string{"pod.1"}) {
		t.Errorf("got %v for source=kubelet, want [pod.1]", got)
	}
	_, err = core.List(coreCtx("default"), &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("note", "x")})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("got %v for an unknown field, want BadRequest", err)
	}

	// Updates through events.k8s.io/v1 cannot change the note.
	_, _, err = v1.Update(v1Ctx("default"), "app.1", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*eventsv1.Event).Note = "changed"
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid message"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
	// ... but the series may.
	obj, _, err = v1.Update(v1Ctx("default"), "app.1", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*eventsv1.Event).Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(time.Now())}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("series update: %v", err)
	}
	if e := obj.(*eventsv1.Event); e.Series == nil || e.Series.Count != 2 {
		t.Errorf("got series %v, want count 2", e.Series)
	}

	// Deletes answer a Status; events never get GC finalizers.
	fg := metav1.DeletePropagationForeground
	obj, deleted, err := v1.Delete(v1Ctx("default"), "app.1", nil, &metav1.DeleteOptions{PropagationPolicy: &fg})
	if err != nil || !deleted {
		t.Fatalf("delete: deleted=%v err=%v", deleted, err)
	}
	if st, ok := obj.(*metav1.Status); !ok || st.Status != metav1.StatusSuccess || st.Details.Group != "events.k8s.io" {
		t.Errorf("got %#v, want a Success status for events.k8s.io", obj)
	}
}

func TestEventsV1Watch(t *testing.T) {
	_, v1 := newStores(t)
	w, err := v1.Watch(v1Ctx("default"), &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := v1.Create(v1Ctx("default"), v1Event("app.1"), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		e, ok := ev.Object.(*eventsv1.Event)
		if ev.Type != watch.Added || !ok || e.Name != "app.1" {
			t.Errorf("got %s %T, want ADDED *eventsv1.Event app.1", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
}

func TestEventTable(t *testing.T) {
	now := time.Now()
	legacy := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "pod.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", FieldPath: "spec.containers{c}"},
		Reason:         "BackOff",
		Message:        " back-off \n",
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: metav1.NewTime(now.Add(-10 * time.Minute)),
		LastTimestamp:  metav1.NewTime(now.Add(-5 * time.Minute)),
		Count:          7,
		Type:           corev1.EventTypeWarning,
	}
	single := ToEventsV1(&corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "node.2"},
		InvolvedObject:      corev1.ObjectReference{Kind: "Node"},
		Reason:              "Ready",
		EventTime:           metav1.NewMicroTime(now.Add(-3 * time.Minute)),
		ReportingController: "ctrl",
		Type:                corev1.EventTypeNormal,
	})
	tbl, err := TableConvertor.ConvertToTable(t.Context(), &corev1.EventList{Items: []corev1.Event{*legacy}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		if c.Priority == 0 {
			cols = append(cols, c.Name)
		}
	}
	if got, want := strings.Join(cols, ","), "Last Seen,Type,Reason,Object,Message"; got != want {
		t.Errorf("got default columns %s, want %s", got, want)
	}
	if got, want := len(tbl.ColumnDefinitions), 10; got != want {
		t.Errorf("got %d columns, want %d", got, want)
	}
	want := []any{"5m", "Warning", "BackOff", "pod/web", "spec.containers{c}", "kubelet, node-1", "back-off", "10m", int64(7), "pod.1"}
	if got := tbl.Rows[0].Cells; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
	tbl, err = TableConvertor.ConvertToTable(t.Context(), single, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []any{"3m", "Normal", "Ready", "node", "", "ctrl", "", "3m", int64(1), "node.2"}
	if got := tbl.Rows[0].Cells; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
	if _, ok := tbl.Rows[0].Object.Object.(*eventsv1.Event); !ok {
		t.Errorf("got row object %T, want the events.k8s.io/v1 event", tbl.Rows[0].Object.Object)
	}
}

func TestFieldLabelConversions(t *testing.T) {
	cases := []struct {
		conv      func(label, value string) (string, string, error)
		label     string
		wantLabel string
		wantErr   bool
	}{
		{FieldLabelConversion, "involvedObject.kind", "involvedObject.kind", false},
		{FieldLabelConversion, "reportingComponent", "reportingComponent", false},
		{FieldLabelConversion, "regarding.kind", "", true},
		{EventsV1FieldLabelConversion, "regarding.kind", "involvedObject.kind", false},
		{EventsV1FieldLabelConversion, "reportingController", "reportingComponent", false},
		{EventsV1FieldLabelConversion, "metadata.name", "metadata.name", false},
		{EventsV1FieldLabelConversion, "involvedObject.kind", "", true},
		// Not selectable in events.k8s.io/v1 (upstream has no mapping for it).
		{EventsV1FieldLabelConversion, "source", "", true},
	}
	for _, tc := range cases {
		got, _, err := tc.conv(tc.label, "x")
		if (err != nil) != tc.wantErr || got != tc.wantLabel {
			t.Errorf("%s: got %q, %v; want %q, error %v", tc.label, got, err, tc.wantLabel, tc.wantErr)
		}
	}
}

func TestAddFieldLabelConversions(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddFieldLabelConversions(s); err != nil {
		t.Fatal(err)
	}
	label, _, err := s.ConvertFieldLabel(eventsv1.SchemeGroupVersion.WithKind("Event"), "regarding.name", "x")
	if err != nil || label != "involvedObject.name" {
		t.Errorf("events.k8s.io/v1: got %q, %v; want involvedObject.name", label, err)
	}
	label, _, err = s.ConvertFieldLabel(corev1.SchemeGroupVersion.WithKind("Event"), "involvedObject.name", "x")
	if err != nil || label != "involvedObject.name" {
		t.Errorf("core/v1: got %q, %v; want involvedObject.name", label, err)
	}
}
