package apiextensions

import (
	"fmt"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/version"
)

// deprecationWarnings returns the warning every request for a deprecated
// version of crd gets, by version name (apiextensions-apiserver v0.37.2
// customresource_handler.go: the version's deprecationWarning, else
// defaultDeprecationWarning's "<group>/<version> <Kind> is deprecated",
// with "; use <group>/<version> <Kind>" naming the highest served,
// non-deprecated version above it when there is one). nil when no
// version is deprecated.
func deprecationWarnings(crd *apiextensionsv1.CustomResourceDefinition) map[string]string {
	var out map[string]string
	for _, v := range crd.Spec.Versions {
		if !v.Deprecated {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		if v.DeprecationWarning != nil {
			out[v.Name] = *v.DeprecationWarning
			continue
		}
		out[v.Name] = defaultDeprecationWarning(v.Name, crd.Spec)
	}
	return out
}

func defaultDeprecationWarning(deprecated string, spec apiextensionsv1.CustomResourceDefinitionSpec) string {
	msg := fmt.Sprintf("%s/%s %s is deprecated", spec.Group, deprecated, spec.Names.Kind)
	var newer []string
	for _, v := range spec.Versions {
		if v.Served && !v.Deprecated && version.CompareKubeAwareVersionStrings(deprecated, v.Name) < 0 {
			newer = append(newer, v.Name)
		}
	}
	if len(newer) == 0 {
		return msg
	}
	sort.Slice(newer, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(newer[i], newer[j]) > 0 })
	return msg + fmt.Sprintf("; use %s/%s %s", spec.Group, newer[0], spec.Names.Kind)
}
