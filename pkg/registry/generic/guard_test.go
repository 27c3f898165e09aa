package generic

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// panickyStrategy panics validating a ConfigMap whose data holds "boom",
// as a validation meeting a value it cannot handle would.
type panickyStrategy struct{ configMapStrategy }

func (panickyStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	if _, ok := obj.(*corev1.ConfigMap).Data["boom"]; ok {
		panic("impossible value")
	}
	return nil
}

func (panickyStrategy) ValidateUpdate(ctx context.Context, obj, _ runtime.Object) field.ErrorList {
	return panickyStrategy{}.Validate(ctx, obj)
}

// A panic in the strategy or in admission, on the object a request sent,
// is a 400 BadRequest naming the step, for create, update and
// create-on-update alike; the store goes on serving.
func TestStrategyPanicIsBadRequest(t *testing.T) {
	b := newBackend(t)
	s := newConfigMapStore(t, b, func(s *Store) {
		s.CreateStrategy = panickyStrategy{}
		s.UpdateStrategy = panickyStrategy{configMapStrategy{createOnUpdate: true, unconditional: true}}
		s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	})
	ctx := request.WithNamespace(context.Background(), "ns")
	boom := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: map[string]string{"boom": "x"}}
	}
	wantBadRequest := func(what string, err error, step string) {
		t.Helper()
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), step) || !strings.Contains(err.Error(), "impossible value") {
			t.Errorf("%s: got %v, want a 400 naming %q and the panic", what, err, step)
		}
	}
	_, err := s.Create(ctx, boom("a"), nil, &metav1.CreateOptions{})
	wantBadRequest("create", err, "validating the object")

	if _, err := s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}}, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Update(ctx, "b", replace(boom("b")), nil, nil, false, &metav1.UpdateOptions{})
	wantBadRequest("update", err, "validating the object")
	_, _, err = s.Update(ctx, "c", replace(boom("c")), nil, nil, false, &metav1.UpdateOptions{})
	wantBadRequest("create on update", err, "validating the object")

	admission := func(context.Context, runtime.Object) error { panic("admission meets a strange value") }
	_, err = s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"}}, admission, &metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "admission") {
		t.Errorf("admission: got %v, want a 400", err)
	}
}
