package generic

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var objectMetaDescriptions = metav1.ObjectMeta{}.SwaggerDoc()

// NewDefaultTableConvertor returns kube's default Table: columns "Name"
// (string, format name) and "Created At" (date), one row per object, each
// carrying its object (the handler drops it unless includeObject asks).
func NewDefaultTableConvertor(resource schema.GroupResource) rest.TableConvertor {
	return defaultTableConvertor{resource: resource}
}

type defaultTableConvertor struct {
	resource schema.GroupResource
}

func (c defaultTableConvertor) ConvertToTable(ctx context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	var table metav1.Table
	row := func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err != nil {
			resource := c.resource
			if info, ok := request.RequestInfoFrom(ctx); ok && info.Resource != "" {
				resource = schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
			}
			return &apierrors.StatusError{ErrStatus: metav1.Status{
				Status:  metav1.StatusFailure,
				Code:    http.StatusNotAcceptable,
				Reason:  metav1.StatusReasonNotAcceptable,
				Message: fmt.Sprintf("the resource %s does not support being converted to a Table", resource),
			}}
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)},
			Object: runtime.RawExtension{Object: obj},
		})
		return nil
	}
	if meta.IsListType(object) {
		if err := meta.EachListItem(object, row); err != nil {
			return nil, err
		}
	} else if err := row(object); err != nil {
		return nil, err
	}
	if l, err := meta.ListAccessor(object); err == nil {
		table.ResourceVersion = l.GetResourceVersion()
		table.Continue = l.GetContinue()
		table.RemainingItemCount = l.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(object); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: objectMetaDescriptions["name"]},
			{Name: "Created At", Type: "date", Description: objectMetaDescriptions["creationTimestamp"]},
		}
	}
	return &table, nil
}
