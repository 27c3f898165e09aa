package table

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// ObjectMetaDescriptions are the descriptions of ObjectMeta's fields, used
// by the Name and Age columns.
var ObjectMetaDescriptions = metav1.ObjectMeta{}.SwaggerDoc()

// NameColumn is every kind's Name column.
var NameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: ObjectMetaDescriptions["name"]}

// AgeColumn is every kind's Age column.
var AgeColumn = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: ObjectMetaDescriptions["creationTimestamp"]}

// RowFunc returns the cells of one object's row, or ok=false if obj is not
// of the kind the Convertor renders.
type RowFunc func(obj runtime.Object) (cells []any, ok bool)

// Convertor is a rest.TableConvertor for one kind.
type Convertor struct {
	// Columns are the column definitions, in cell order.
	Columns []metav1.TableColumnDefinition
	// Row renders one object.
	Row RowFunc
	// Order, when set, orders a list's rows (a stable sort; negative: a
	// first), as the printers of a few upstream lists do (FlowSchemas).
	Order func(a, b runtime.Object) int
}

var _ rest.TableConvertor = Convertor{}

// ConvertToTable implements rest.TableConvertor: one row per object (each
// carrying its object), the list's resourceVersion, continue and
// remainingItemCount, and the columns unless tableOptions asks for no
// headers. An object of another kind is 406 NotAcceptable.
func (c Convertor) ConvertToTable(_ context.Context, object, tableOptions runtime.Object) (*metav1.Table, error) {
	noHeaders := false
	switch o := tableOptions.(type) {
	case nil:
	case *metav1.TableOptions:
		noHeaders = o != nil && o.NoHeaders
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized type %T for table options, can't display tabular output", tableOptions))
	}
	table := &metav1.Table{Rows: []metav1.TableRow{}}
	addRow := func(obj runtime.Object) error {
		cells, ok := c.Row(obj)
		if !ok {
			return &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
				Message: fmt.Sprintf("unknown type %T for table output", obj),
			}}
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}})
		return nil
	}
	if meta.IsListType(object) {
		var items []runtime.Object
		if err := meta.EachListItem(object, func(o runtime.Object) error {
			items = append(items, o)
			return nil
		}); err != nil {
			return nil, err
		}
		if c.Order != nil {
			slices.SortStableFunc(items, c.Order)
		}
		for _, o := range items {
			if err := addRow(o); err != nil {
				return nil, err
			}
		}
	} else if err := addRow(object); err != nil {
		return nil, err
	}
	if l, err := meta.ListAccessor(object); err == nil {
		table.ResourceVersion = l.GetResourceVersion()
		table.Continue = l.GetContinue()
		table.RemainingItemCount = l.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(object); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	if !noHeaders {
		table.ColumnDefinitions = c.Columns
	}
	return table, nil
}

// Since is kubectl's age of t ("5m", "3d4h"), or "<unknown>" for a zero
// time.
func Since(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// SinceMicro is Since for a MicroTime.
func SinceMicro(t metav1.MicroTime) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}
