package handlers

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// RepeatedCreateFieldManager is implemented by the FieldManagers that can
// reuse the managed fields they computed for an identical create earlier
// in the process. Only the creates whose context is marked with
// [WithRepeatedCreate] ask for it: the objects every server of the
// process creates alike at start (the RBAC bootstrap policy), so the
// memory such reuse keeps is bounded by that set.
type RepeatedCreateFieldManager interface {
	// UpdateRepeatedCreate returns what UpdateNoErrors(liveObj, newObj,
	// manager) returns for a create (liveObj empty), reusing the
	// managed-fields entry of an earlier identical create when there was
	// one (only its time is new).
	UpdateRepeatedCreate(liveObj, newObj runtime.Object, manager string) runtime.Object
}

type repeatedCreateKey struct{}

// WithRepeatedCreate marks ctx's creates as ones every server of the
// process makes alike, whose managed fields may be computed once per
// process (see [RepeatedCreateFieldManager]). The stored objects are the
// same as without the mark.
func WithRepeatedCreate(ctx context.Context) context.Context {
	return context.WithValue(ctx, repeatedCreateKey{}, true)
}

func isRepeatedCreate(ctx context.Context) bool {
	v, _ := ctx.Value(repeatedCreateKey{}).(bool)
	return v
}

// createManagedFields is the managed-fields step of a create: obj recorded
// as an Update by manager against the empty live object fresh.
func (s *RequestScope) createManagedFields(ctx context.Context, fresh, obj runtime.Object, manager string) runtime.Object {
	if rm, ok := s.FieldManager.(RepeatedCreateFieldManager); ok && isRepeatedCreate(ctx) {
		return rm.UpdateRepeatedCreate(fresh, obj, manager)
	}
	return s.FieldManager.UpdateNoErrors(fresh, obj, manager)
}
