package generic

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// secretAttrs adds the secret's type as a selectable field, as kube's.
func secretAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	l, f, err := storage.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	f["type"] = string(obj.(*corev1.Secret).Type)
	return l, f, nil
}

func newSecretStore(t *testing.T, b *memory.Backend) *Store {
	newFunc := func() runtime.Object { return &corev1.Secret{} }
	newList := func() runtime.Object { return &corev1.SecretList{} }
	return completeStore(t, &Store{
		NewFunc:                  newFunc,
		NewListFunc:              newList,
		DefaultQualifiedResource: schema.GroupResource{Resource: "secrets"},
		CreateStrategy:           namespacedConfigMapLike{},
		UpdateStrategy:           namespacedConfigMapLike{},
		GetAttrs:                 secretAttrs,
		FieldLabels:              []string{"type"},
		Storage:                  b.Store(memory.Config{Codec: testCodec, NewFunc: newFunc, NewListFunc: newList}),
	})
}

type namespacedConfigMapLike struct{ configMapLike }

func (namespacedConfigMapLike) NamespaceScoped() bool { return true }

func TestList(t *testing.T) {
	b := newBackend(t)
	s := newSecretStore(t, b)
	for _, o := range []struct{ ns, name, typ, group string }{
		{"a", "s1", "Opaque", "x"}, {"a", "s2", "kubernetes.io/tls", "y"}, {"a", "s3", "Opaque", "y"},
		{"b", "s1", "Opaque", "x"}, {"b", "s4", "kubernetes.io/tls", "x"},
	} {
		mustCreate(t, s, nsCtx(o.ns), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: o.name,
			Labels: map[string]string{"group": o.group}}, Type: corev1.SecretType(o.typ)})
	}
	cases := []struct {
		name   string
		ns     string
		label  string
		field  string
		want   []string
		code   int32
		reason metav1.StatusReason
		msg    string
	}{
		{name: "namespace", ns: "a", want: []string{"a/s1", "a/s2", "a/s3"}},
		{name: "all namespaces", want: []string{"a/s1", "a/s2", "a/s3", "b/s1", "b/s4"}},
		{name: "labels", label: "group=x", want: []string{"a/s1", "b/s1", "b/s4"}},
		{name: "name", ns: "a", field: "metadata.name=s2", want: []string{"a/s2"}},
		{name: "name across namespaces", field: "metadata.name=s1", want: []string{"a/s1", "b/s1"}},
		{name: "namespace field", field: "metadata.namespace=b", want: []string{"b/s1", "b/s4"}},
		{name: "namespace and name fields", field: "metadata.namespace=b,metadata.name=s1", want: []string{"b/s1"}},
		{name: "resource field", field: "type=Opaque", label: "group=y", want: []string{"a/s3"}},
		{name: "resource field not equal", ns: "b", field: "type!=Opaque", want: []string{"b/s4"}},
		{
			name: "unsupported field", field: "spec.foo=bar",
			code: http.StatusBadRequest, reason: metav1.StatusReasonBadRequest, msg: "field label not supported: spec.foo",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := &metainternalversion.ListOptions{}
			if tc.label != "" {
				sel, err := labels.Parse(tc.label)
				if err != nil {
					t.Fatal(err)
				}
				opts.LabelSelector = sel
			}
			if tc.field != "" {
				opts.FieldSelector = fields.ParseSelectorOrDie(tc.field)
			}
			out, err := s.List(nsCtx(tc.ns), opts)
			if tc.code != 0 {
				wantStatus(t, err, tc.code, tc.reason, tc.msg)
				return
			}
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			list := out.(*corev1.SecretList)
			var got []string
			for _, i := range list.Items {
				got = append(got, i.Namespace+"/"+i.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if list.ResourceVersion != fmt.Sprint(b.Revision()) {
				t.Errorf("got list resourceVersion %q, want %d", list.ResourceVersion, b.Revision())
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	b := newBackend(t)
	s := newConfigMapStore(t, b)
	ctx := nsCtx("ns")
	for i := range 4 {
		mustCreate(t, s, ctx, configMap(fmt.Sprintf("c%d", i), nil))
	}
	first, err := s.List(ctx, &metainternalversion.ListOptions{Limit: 2})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	firstList := first.(*corev1.ConfigMapList)
	if len(firstList.Items) != 2 || firstList.Continue == "" {
		t.Fatalf("got %d items, continue %q, want 2 and a token", len(firstList.Items), firstList.Continue)
	}
	rest, err := s.List(ctx, &metainternalversion.ListOptions{Limit: 2, Continue: firstList.Continue})
	if err != nil || len(rest.(*corev1.ConfigMapList).Items) != 2 {
		t.Fatalf("second page: %v", err)
	}

	_, err = s.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.ParseSelectorOrDie("data.k=v")})
	wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest,
		`"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"`)
	_, err = s.Watch(ctx, &metainternalversion.ListOptions{FieldSelector: fields.ParseSelectorOrDie("data.k=v")})
	wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "")

	_, err = s.List(ctx, &metainternalversion.ListOptions{ResourceVersion: fmt.Sprint(b.Revision() + 100)})
	se := wantStatus(t, err, http.StatusGatewayTimeout, metav1.StatusReasonTimeout, "")
	if se.ErrStatus.Details.RetryAfterSeconds != 1 || len(se.ErrStatus.Details.Causes) != 1 ||
		se.ErrStatus.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge {
		t.Errorf("got details %+v, want retryAfterSeconds 1 and cause ResourceVersionTooLarge", se.ErrStatus.Details)
	}
	_, err = s.List(ctx, &metainternalversion.ListOptions{Continue: "not-a-token", Limit: 1})
	wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "")
	_, err = s.List(ctx, &metainternalversion.ListOptions{ResourceVersion: "abc"})
	wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "")

	// Compacted history: exact lists and continue tokens expire.
	early := fmt.Sprint(b.Revision() - 2)
	mustCreate(t, s, ctx, configMap("late", nil))
	if err := b.Compact(context.Background(), b.Revision()); err != nil {
		t.Fatalf("compact: %v", err)
	}
	_, err = s.List(ctx, &metainternalversion.ListOptions{ResourceVersion: early, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	wantStatus(t, err, http.StatusGone, metav1.StatusReasonExpired, "The resourceVersion for the provided list is too old.")
	_, err = s.List(ctx, &metainternalversion.ListOptions{Limit: 2, Continue: firstList.Continue})
	se = wantStatus(t, err, http.StatusGone, metav1.StatusReasonExpired, "")
	if se.ErrStatus.ListMeta.Continue == "" {
		t.Errorf("got no fresh continue token in %+v", se.ErrStatus)
	} else if _, err := s.List(ctx, &metainternalversion.ListOptions{Limit: 2, Continue: se.ErrStatus.ListMeta.Continue}); err != nil {
		t.Errorf("continue with the fresh token: %v", err)
	}
	_, err = s.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: early})
	wantStatus(t, err, http.StatusGone, metav1.StatusReasonExpired, "")
}

func TestWatch(t *testing.T) {
	b := newBackend(t)
	s := newConfigMapStore(t, b)
	ctx, cancel := context.WithCancel(nsCtx("ns"))
	defer cancel()
	start := b.Revision()
	w, err := s.Watch(ctx, &metainternalversion.ListOptions{
		ResourceVersion: fmt.Sprint(start),
		LabelSelector:   labels.SelectorFromSet(labels.Set{"watch": "me"}),
	})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	mustCreate(t, s, ctx, configMap("ignored", nil))
	o := configMap("seen", nil)
	o.Labels = map[string]string{"watch": "me"}
	mustCreate(t, s, ctx, o)
	if _, _, err := s.Delete(ctx, "seen", nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	want := []watch.EventType{watch.Added, watch.Deleted}
	var got []watch.EventType
	deadline := time.After(10 * time.Second)
	for len(got) < len(want) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %v", got)
			}
			if name := ev.Object.(*corev1.ConfigMap).Name; name != "seen" {
				t.Errorf("got event for %q, want only seen", name)
			}
			got = append(got, ev.Type)
		case <-deadline:
			t.Fatalf("got events %v, want %v", got, want)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("got events %v, want %v", got, want)
	}

	// The name field narrows the watch to one key.
	w2, err := s.Watch(ctx, &metainternalversion.ListOptions{
		ResourceVersion: fmt.Sprint(start), FieldSelector: fields.OneTermEqualSelector("metadata.name", "ignored")})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w2.Stop()
	select {
	case ev := <-w2.ResultChan():
		if ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "ignored" {
			t.Errorf("got %s %v, want ADDED ignored", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
}

func TestQualifiedResourceFromRequest(t *testing.T) {
	s := newConfigMapStore(t, newBackend(t), func(s *Store) {
		s.DefaultQualifiedResource = schema.GroupResource{Resource: "events"}
	})
	ctx := request.WithRequestInfo(nsCtx("ns"), &request.RequestInfo{IsResourceRequest: true, APIGroup: "events.k8s.io", Resource: "events"})
	_, err := s.Get(ctx, "x", &metav1.GetOptions{})
	wantStatus(t, err, http.StatusNotFound, metav1.StatusReasonNotFound, `events.events.k8s.io "x" not found`)
	_, err = s.Get(nsCtx("ns"), "x", &metav1.GetOptions{})
	wantStatus(t, err, http.StatusNotFound, metav1.StatusReasonNotFound, `events "x" not found`)
	if s.KeyPrefix != "/events" {
		t.Errorf("got key prefix %q, want /events", s.KeyPrefix)
	}
}
