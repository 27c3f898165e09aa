package lease

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = coordinationv1.Resource("leases")

// NewREST returns the completed store of coordination.k8s.io/v1 leases
// (no short name), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, coordinationv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &coordinationv1.Lease{} },
		NewListFunc:               func() runtime.Object { return &coordinationv1.LeaseList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: coordinationv1.Resource("lease"),
		NameValidator:             validation.ValidateLeaseName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}

// TableConvertor renders leases as kubectl shows them: NAME HOLDER AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		l, ok := obj.(*coordinationv1.Lease)
		if !ok {
			return nil, false
		}
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return []any{l.Name, holder, table.Since(l.CreationTimestamp)}, true
	},
}
