package apiservice

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = apiregistrationv1.Resource("apiservices")

// NewREST returns the completed store of apiregistration.k8s.io/v1
// apiservices (no short name, category api-extensions) and its status
// subresource, on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, *generic.StatusREST, error) {
	store, err := generic.NewStore(opts, apiregistrationv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &apiregistrationv1.APIService{} },
		NewListFunc:               func() runtime.Object { return &apiregistrationv1.APIServiceList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: apiregistrationv1.Resource("apiservice"),
		ResourceCategories:        []string{"api-extensions"},
		NameValidator:             generic.ValidatePathSegmentName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("apiservices: %w", err)
	}
	return store, generic.NewStatusREST(store, StatusStrategy), nil
}

// TableConvertor renders apiservices as kube-aggregator does: NAME
// SERVICE AVAILABLE AGE, SERVICE being "Local" or "<namespace>/<name>" and
// AVAILABLE "True", "False (<reason>)" or "Unknown".
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Service", Type: "string", Description: "The reference to the service that hosts this API endpoint."},
		{Name: "Available", Type: "string", Description: "Whether this service is available."},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		svc, ok := obj.(*apiregistrationv1.APIService)
		if !ok {
			return nil, false
		}
		service := "Local"
		if svc.Spec.Service != nil {
			service = svc.Spec.Service.Namespace + "/" + svc.Spec.Service.Name
		}
		return []any{svc.Name, service, availableCell(svc), table.Since(svc.CreationTimestamp)}, true
	},
}

func availableCell(svc *apiregistrationv1.APIService) string {
	c := Condition(svc, apiregistrationv1.Available)
	switch {
	case c == nil:
		return string(apiregistrationv1.ConditionUnknown)
	case c.Status == apiregistrationv1.ConditionTrue, c.Reason == "":
		return string(c.Status)
	default:
		return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
	}
}
