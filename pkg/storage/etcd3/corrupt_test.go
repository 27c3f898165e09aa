package etcd3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// badCodec cannot decode what holds "bad" (as a custom resource's codec
// cannot while its conversion webhook fails on an object).
type badCodec struct{ runtime.Codec }

func (c badCodec) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if bytes.Contains(data, []byte("bad")) {
		return nil, nil, errors.New("cannot convert")
	}
	return c.Codec.Decode(data, gvk, into)
}

// Lists that meet objects they cannot decode answer as kube-apiserver
// v1.37.2's etcd3 store (AllowUnsafeMalformedObjectDeletion on): the list
// reads on and fails with 500 StorageReadError naming every corrupt
// object by its etcd key (with the prefix); a page without selectors reads
// only its Limit keys (upstream's etcd range stream); a selective page
// reads on (growing pages) as for objects the selector drops. Recorded on
// the reference with a failing conversion webhook: `GET .../gizmos?limit=1`
// named the first object only, `?labelSelector=a%3Db&limit=1` all three.
func TestListCorruptObjects(t *testing.T) {
	srv := startEtcd(t)
	s := New(srv.Client(), Config{
		Codec:         badCodec{testCodec},
		NewFunc:       func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:   func() runtime.Object { return &corev1.ConfigMapList{} },
		Logger:        quietLogger(),
		GroupResource: schema.GroupResource{Resource: "configmaps"},
	})
	ctx := context.Background()
	// Written by a store that decodes everything.
	w := New(srv.Client(), Config{Codec: testCodec, NewFunc: func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} }, Logger: quietLogger()})
	revs := map[string]uint64{}
	for i, v := range []string{"ok", "bad", "ok", "bad"} {
		name := fmt.Sprintf("c%02d", i)
		revs[name] = rvOf(t, mustCreate(t, w, newCM(name, nil, map[string]string{"k": v})))
	}
	corrupt := func(name string) metav1.StatusCause {
		return metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Field: "/registry/configmaps/ns/" + name,
			Message: fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: /registry/configmaps/ns/%s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: cannot convert", name, revs[name])}
	}
	check := func(what string, err error, causes ...metav1.StatusCause) {
		t.Helper()
		var st apierrors.APIStatus
		if !errors.As(err, &st) {
			t.Fatalf("%s: got %v, want a StorageReadError", what, err)
		}
		msg := "failed to read one or more configmaps from the storage: " + causes[0].Message
		if len(causes) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(causes)-1)
		}
		got := st.Status()
		want := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonStoreReadError,
			Message: msg, Details: &metav1.StatusDetails{Kind: "configmaps", Name: "list", Causes: causes}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", what, got, want)
		}
	}
	err := s.GetList(ctx, "/configmaps/ns", storage.ListOptions{Recursive: true}, &corev1.ConfigMapList{})
	check("list", err, corrupt("c01"), corrupt("c03"))
	err = s.GetList(ctx, "/configmaps", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2}}, &corev1.ConfigMapList{})
	check("page of 2", err, corrupt("c01"))
	sel := labels.SelectorFromSet(labels.Set{"a": "b"})
	err = s.GetList(ctx, "/configmaps", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1, Label: sel}}, &corev1.ConfigMapList{})
	check("selective page", err, corrupt("c01"), corrupt("c03"))

	l := &corev1.ConfigMapList{}
	if err := s.GetList(ctx, "/configmaps", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1}}, l); err != nil || len(l.Items) != 1 || l.Continue == "" {
		t.Errorf("page of 1 (c00, decodable): %v, %+v", err, l.ListMeta)
	}
	// A get names the key without the prefix (upstream's corrupt-object
	// error of a get is the request's key).
	err = s.Get(ctx, cmKey("c01"), storage.GetOptions{}, &corev1.ConfigMap{})
	if !storage.IsCorruptObj(err) || !bytes.Contains([]byte(err.Error()), []byte("Key: /configmaps/ns/c01,")) {
		t.Errorf("get: got %v, want the corrupt-object error of /configmaps/ns/c01", err)
	}
}
