package apiextensions

import (
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// crdTable renders CRDs as kube-apiserver v1.37.2 does
// (apiextensions-apiserver v0.37.2
// pkg/registry/customresourcedefinition/tableconvertor; the columns were
// observed on that binary): NAME SCOPE VERSIONS CREATED AT, and with -o
// wide GROUP KIND SHORTNAMES ESTABLISHED. VERSIONS are the served versions,
// sorted, the storage one marked "(storage)"; CREATED AT is RFC 3339 in
// UTC.
var crdTable = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Scope", Type: "string", Description: "Cluster/Namespaced"},
		{Name: "Versions", Type: "string", Description: "Served versions"},
		{Name: "Created At", Type: "date", Description: table.ObjectMetaDescriptions["creationTimestamp"]},
		{Name: "Group", Type: "string", Priority: 1, Description: "API group"},
		{Name: "Kind", Type: "string", Priority: 1, Description: "CustomResource kind"},
		{Name: "ShortNames", Type: "string", Priority: 1, Description: "Short names"},
		{Name: "Established", Type: "boolean", Priority: 1, Description: "Established status"},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			return nil, false
		}
		var versions []string
		for _, v := range crd.Spec.Versions {
			if v.Served {
				label := v.Name
				if v.Storage {
					label += "(storage)"
				}
				versions = append(versions, label)
			}
		}
		slices.Sort(versions)
		established := false
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		return []any{crd.Name, string(crd.Spec.Scope), strings.Join(versions, ","),
			crd.CreationTimestamp.UTC().Format(time.RFC3339), crd.Spec.Group, crd.Spec.Names.Kind,
			strings.Join(crd.Spec.Names.ShortNames, ","), established}, true
	},
}
