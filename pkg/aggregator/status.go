package aggregator

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/aggregator/apiservice"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// mutation is a rest.UpdatedObjectInfo that changes a copy of the stored
// object (so a conflict just runs it again on the newer object).
type mutation func(svc *apiregistrationv1.APIService)

var _ rest.UpdatedObjectInfo = mutation(nil)

func (mutation) Preconditions() *metav1.Preconditions { return nil }

func (m mutation) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	svc, ok := old.(*apiregistrationv1.APIService)
	if !ok {
		return nil, fmt.Errorf("not an APIService: %T", old)
	}
	svc = svc.DeepCopy()
	m(svc)
	return svc, nil
}

// systemContext is the context the controllers call the store with.
func systemContext(ctx context.Context) context.Context {
	return request.WithNamespace(ctx, "")
}

// setAvailable writes c as name's Available condition through /status
// (lastTransitionTime changes only with the status).
func (a *Aggregator) setAvailable(ctx context.Context, name string, c apiregistrationv1.APIServiceCondition) error {
	var before, after *apiregistrationv1.APIService // of the last try
	_, _, err := a.status.Update(systemContext(ctx), name, mutation(func(svc *apiregistrationv1.APIService) {
		before = svc.DeepCopy()
		apiservice.SetCondition(svc, c)
		after = svc
	}), nil, nil, false, &metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return fmt.Errorf("update status of apiservice %s: %w", name, err)
	}
	a.availability.statusWritten(name, before, after)
	return nil
}

// sameCondition reports whether svc's Available condition already says
// what c says (status, reason, message).
func sameCondition(svc *apiregistrationv1.APIService, c apiregistrationv1.APIServiceCondition) bool {
	old := apiservice.Condition(svc, c.Type)
	return old != nil && old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message
}
