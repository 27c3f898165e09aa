package customresource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var metadataDescriptions = metav1.ObjectMeta{}.SwaggerDoc()

// tableConvertor renders custom resources as upstream: a Name column, then
// the version's additionalPrinterColumns, or an Age column when it
// declares none.
type tableConvertor struct {
	headers []metav1.TableColumnDefinition
	// paths are the columns' templates; a JSONPath keeps state while it
	// evaluates, so each conversion parses its own.
	paths []string
}

// NewTableConvertor builds the convertor of a version's columns; a column
// whose JSONPath does not parse is skipped (CRD validation only checks
// that it starts with a dot, as upstream's).
func NewTableConvertor(_ schema.GroupResource, columns []apiextensionsv1.CustomResourceColumnDefinition) rest.TableConvertor {
	if len(columns) == 0 {
		columns = []apiextensionsv1.CustomResourceColumnDefinition{{
			Name: "Age", Type: "date", Description: metadataDescriptions["creationTimestamp"], JSONPath: ".metadata.creationTimestamp",
		}}
	}
	c := &tableConvertor{headers: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: metadataDescriptions["name"]},
	}}
	for _, col := range columns {
		tmpl := fmt.Sprintf("{%s}", col.JSONPath)
		if err := jsonpath.New(col.Name).Parse(tmpl); err != nil {
			continue
		}
		desc := col.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + col.JSONPath
		}
		c.paths = append(c.paths, tmpl)
		c.headers = append(c.headers, metav1.TableColumnDefinition{
			Name: col.Name, Type: col.Type, Format: col.Format, Description: desc, Priority: col.Priority,
		})
	}
	return c
}

func (c *tableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || opts == nil || !opts.NoHeaders {
		table.ColumnDefinitions = c.headers
	}
	if l, err := meta.ListAccessor(obj); err == nil {
		table.ResourceVersion = l.GetResourceVersion()
		table.Continue = l.GetContinue()
		table.RemainingItemCount = l.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	paths := make([]*jsonpath.JSONPath, len(c.paths))
	for i, tmpl := range c.paths {
		p := jsonpath.New(c.headers[i+1].Name)
		if err := p.Parse(tmpl); err != nil {
			return nil, fmt.Errorf("column %q: %w", c.headers[i+1].Name, err)
		}
		p.AllowMissingKeys(true)
		paths[i] = p
	}
	var buf bytes.Buffer
	rows, err := metatable.MetaToTableRow(obj, func(obj runtime.Object, _ metav1.Object, name, _ string) ([]any, error) {
		cells := make([]any, 1, 1+len(paths))
		cells[0] = name
		var content map[string]any
		if u, ok := obj.(runtime.Unstructured); ok {
			content = u.UnstructuredContent()
		} else {
			// A typed object (the scale subresource's Scale): its JSON
			// form, as upstream's tableconvertor.
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			if err != nil {
				return nil, err
			}
			content = m
		}
		for i, p := range paths {
			results, err := p.FindResults(content)
			if err != nil || len(results) == 0 || len(results[0]) == 0 {
				cells = append(cells, nil)
				continue
			}
			value := results[0][0].Interface()
			if c.headers[i+1].Type == "string" {
				if err := p.PrintResults(&buf, []reflect.Value{reflect.ValueOf(value)}); err == nil {
					cells = append(cells, buf.String())
				} else {
					cells = append(cells, nil)
				}
				buf.Reset()
				continue
			}
			cells = append(cells, cell(c.headers[i+1].Type, value))
		}
		return cells, nil
	})
	if err != nil {
		return nil, err
	}
	table.Rows = rows
	return table, nil
}

// cell converts a JSON value to the column's type (nil if it is not one).
func cell(typ string, value any) any {
	switch typ {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "date":
		if s, ok := value.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return metatable.ConvertToHumanReadableDateType(t)
		}
	}
	return nil
}
