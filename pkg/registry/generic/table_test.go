package generic

import (
	"context"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDefaultTable(t *testing.T) {
	c := NewDefaultTableConvertor(schema.GroupResource{Resource: "configmaps"})
	created := metav1.NewTime(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next"}, Items: []corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: created}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: created}},
	}}
	table, err := c.ConvertToTable(context.Background(), list, nil)
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	if len(table.ColumnDefinitions) != 2 ||
		table.ColumnDefinitions[0].Name != "Name" || table.ColumnDefinitions[0].Type != "string" || table.ColumnDefinitions[0].Format != "name" ||
		table.ColumnDefinitions[1].Name != "Created At" || table.ColumnDefinitions[1].Type != "date" ||
		table.ColumnDefinitions[0].Description == "" {
		t.Errorf("got columns %+v, want Name (string, name) and Created At (date)", table.ColumnDefinitions)
	}
	if len(table.Rows) != 2 || table.Rows[1].Cells[0] != "b" || table.Rows[1].Cells[1] != "2024-05-06T07:08:09Z" {
		t.Errorf("got rows %+v", table.Rows)
	}
	if table.Rows[0].Object.Object == nil {
		t.Error("got a row without its object")
	}
	if table.ResourceVersion != "42" || table.Continue != "next" {
		t.Errorf("got list meta %+v, want rv 42 and continue next", table.ListMeta)
	}

	one, err := c.ConvertToTable(context.Background(), &list.Items[0], &metav1.TableOptions{NoHeaders: true})
	if err != nil || len(one.Rows) != 1 || one.ColumnDefinitions != nil {
		t.Errorf("got %+v, %v: want one row without headers", one, err)
	}

	_, err = c.ConvertToTable(context.Background(), &metav1.Status{}, nil)
	wantStatus(t, err, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"the resource configmaps does not support being converted to a Table")
}

func TestStoreDiscoveryAndComplete(t *testing.T) {
	s := newConfigMapStore(t, newBackend(t))
	if s.GetSingularName() != "configmap" || len(s.ShortNames()) != 1 || s.ShortNames()[0] != "cm" || s.Categories() != nil || !s.NamespaceScoped() {
		t.Errorf("got singular %q short %v categories %v namespaced %v", s.GetSingularName(), s.ShortNames(), s.Categories(), s.NamespaceScoped())
	}
	calls := 0
	s2 := &Store{DestroyFunc: func() { calls++ }}
	if err := s2.Complete(); err == nil {
		t.Error("Complete of an empty store: got nil error")
	}
	s3 := newConfigMapStore(t, newBackend(t), func(s *Store) { s.DestroyFunc = func() { calls++ } })
	s3.Destroy()
	s3.Destroy()
	if calls != 1 {
		t.Errorf("got DestroyFunc called %d times, want once", calls)
	}
}
