package priorityclass

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/scheduling"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// REST is the priorityclasses resource (short name "pc"): the generic
// store, whose Delete refuses the system priority classes.
type REST struct {
	*generic.Store
}

// NewREST returns the priorityclasses resource on the storage opts makes
// for it.
func NewREST(opts generic.RESTOptions) (*REST, error) {
	st, err := newStore(opts)
	if err != nil {
		return nil, err
	}
	return &REST{Store: st}, nil
}

// Delete deletes a priority class, but never a system one (403 Forbidden,
// as upstream's priorityclass storage).
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	for _, spc := range scheduling.SystemPriorityClasses() {
		if name == spc.Name {
			return nil, false, apierrors.NewForbidden(Resource, spc.Name, errors.New("this is a system priority class and cannot be deleted"))
		}
	}
	return r.Store.Delete(ctx, name, deleteValidation, options)
}
