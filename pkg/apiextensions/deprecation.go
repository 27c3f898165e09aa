package apiextensions

import (
	"fmt"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
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

// crdDeprecatedAPIs are the recorders of requests for one deprecated
// version of a CRD: its resource and its status and scale subresources.
type crdDeprecatedAPIs struct {
	resource, status, scale *metrics.DeprecatedAPI
}

// deprecatedAPIs returns the recorders of crd's deprecated versions, by
// version name; nil when none is deprecated. As upstream's crdHandler, a
// CRD's removed_release is always "".
func deprecatedAPIs(m *metrics.Metrics, crd *apiextensionsv1.CustomResourceDefinition) map[string]*crdDeprecatedAPIs {
	var out map[string]*crdDeprecatedAPIs
	for _, v := range crd.Spec.Versions {
		if !v.Deprecated || !v.Served {
			continue
		}
		if out == nil {
			out = map[string]*crdDeprecatedAPIs{}
		}
		api := func(sub string) *metrics.DeprecatedAPI {
			return m.DeprecatedAPI(crd.Spec.Group, v.Name, crd.Spec.Names.Plural, sub, "")
		}
		out[v.Name] = &crdDeprecatedAPIs{resource: api(""), status: api("status"), scale: api("scale")}
	}
	return out
}

// deprecatedAPI returns the recorder of a request for c's resources if
// it is for a deprecated version and upstream's crdHandler would serve it
// with its instrumented handler (InstrumentHandlerFunc): the request's
// scope fits the CRD's (a namespaced CRD's resources are listed and
// watched across namespaces, nothing else), and the resource's verbs
// (create only while the CRD is not terminating) or the status or scale
// subresource, when the version has it, with get, update or patch. Other
// requests (404, 405) are answered before the instrumented handler and
// not recorded. nil for a nil c or any other request.
func (c *crdServing) deprecatedAPI(info *request.RequestInfo) *metrics.DeprecatedAPI {
	if c == nil {
		return nil
	}
	d := c.deprecated[info.APIVersion]
	if d == nil {
		return nil
	}
	if c.crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
		if info.Namespace == "" && info.Verb != "list" && info.Verb != "watch" {
			return nil
		}
	} else if info.Namespace != "" {
		return nil
	}
	v := c.versions[info.APIVersion]
	if v == nil {
		return nil
	}
	subVerb := info.Verb == "get" || info.Verb == "update" || info.Verb == "patch"
	switch info.Subresource {
	case "":
		switch info.Verb {
		case "get", "list", "watch", "update", "patch", "delete", "deletecollection":
			return d.resource
		case "create":
			if !c.terminating.Load() {
				return d.resource
			}
		}
	case "status":
		if v.status != nil && subVerb {
			return d.status
		}
	case "scale":
		if v.scale != nil && subVerb {
			return d.scale
		}
	}
	return nil
}
