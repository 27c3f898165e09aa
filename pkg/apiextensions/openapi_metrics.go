package apiextensions

import (
	"encoding/json"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// OpenAPIMetrics are apiextensions-apiserver's two OpenAPI regeneration
// families, apiextensions_openapi_v2_regeneration_count{crd,reason} and
// apiextensions_openapi_v3_regeneration_count{group,version,crd,reason}.
//
// kube-apiserver v1.37.2's OpenAPI controllers (apiextensions-apiserver
// pkg/controller/openapi and openapiv3) make a series of each for every
// change they take into their documents, and never increment it: every
// series is 0; which series exist is what the families tell. kapi builds
// its documents lazily, per group-version, so OpenAPIMetrics follows the
// CRDs as upstream's controllers do instead:
//
//   - v2, per CRD: "add" when an established CRD is first seen after
//     start, "update" for every later change of it (any change, status
//     included, and each CRD once after start), "remove" when it is gone
//     or no longer established;
//   - v3, per served version of an established CRD, when that version's
//     document changes (at start too): "add" if no CRD had that
//     group-version yet, else "update"; "remove" for each group-version
//     that held it when the CRD is gone or no longer established.
//
// A nil *OpenAPIMetrics records nothing. Safe for concurrent use.
type OpenAPIMetrics struct {
	v2, v3 *prometheus.CounterVec

	mu     sync.Mutex
	v2CRDs map[string]bool
	// v3Docs holds, per group-version, the CRDs in it and a fingerprint
	// of what each contributes to its document.
	v3Docs map[schema.GroupVersion]map[string]string
}

// NewOpenAPIMetrics creates the two families and registers them on reg
// (nil: not registered).
func NewOpenAPIMetrics(reg prometheus.Registerer) (*OpenAPIMetrics, error) {
	m := &OpenAPIMetrics{
		v2: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiextensions_openapi_v2_regeneration_count",
			Help: "[ALPHA] Counter of OpenAPI v2 spec regeneration count broken down by causing CRD name and reason.",
		}, []string{"crd", "reason"}),
		v3: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiextensions_openapi_v3_regeneration_count",
			Help: "[ALPHA] Counter of OpenAPI v3 spec regeneration count broken down by group, version, causing CRD and reason.",
		}, []string{"group", "version", "crd", "reason"}),
		v2CRDs: map[string]bool{},
		v3Docs: map[schema.GroupVersion]map[string]string{},
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.v2, m.v3} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// started takes the CRDs stored at start: upstream's controllers build
// their first documents from them (v3 recording each version, v2 not),
// then sync each once as its informer's first event.
func (m *OpenAPIMetrics) started(items []apiextensionsv1.CustomResourceDefinition) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range items {
		if isConditionTrue(&items[i], apiextensionsv1.Established) {
			m.v2CRDs[items[i].Name] = true
			m.syncV3Locked(items[i].Name, &items[i])
		}
	}
	for i := range items {
		m.changedLocked(items[i].Name, &items[i])
	}
}

// relisted takes a list made after the watch ended: upstream's informer
// reports the CRDs gone meanwhile as deleted and every other as updated.
func (m *OpenAPIMetrics) relisted(items []apiextensionsv1.CustomResourceDefinition) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	listed := map[string]bool{}
	for i := range items {
		listed[items[i].Name] = true
	}
	gone := map[string]bool{}
	for name := range m.v2CRDs {
		if !listed[name] {
			gone[name] = true
		}
	}
	for _, crds := range m.v3Docs {
		for name := range crds {
			if !listed[name] {
				gone[name] = true
			}
		}
	}
	for name := range gone {
		m.changedLocked(name, nil)
	}
	for i := range items {
		m.changedLocked(items[i].Name, &items[i])
	}
}

// changed takes a watch event of the CRD called name: its new state, nil
// if deleted.
func (m *OpenAPIMetrics) changed(name string, crd *apiextensionsv1.CustomResourceDefinition) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.changedLocked(name, crd)
}

func (m *OpenAPIMetrics) changedLocked(name string, crd *apiextensionsv1.CustomResourceDefinition) {
	live := crd != nil && isConditionTrue(crd, apiextensionsv1.Established)
	switch {
	case !live && m.v2CRDs[name]:
		delete(m.v2CRDs, name)
		m.v2.WithLabelValues(name, "remove")
	case live && m.v2CRDs[name]:
		m.v2.WithLabelValues(name, "update")
	case live:
		m.v2CRDs[name] = true
		m.v2.WithLabelValues(name, "add")
	}
	if !live {
		for gv, crds := range m.v3Docs {
			if _, ok := crds[name]; !ok {
				continue
			}
			delete(crds, name)
			if len(crds) == 0 {
				delete(m.v3Docs, gv)
			}
			m.v3.WithLabelValues(gv.Group, gv.Version, name, "remove")
		}
		return
	}
	m.syncV3Locked(name, crd)
}

// syncV3Locked records the served versions of an established crd whose
// document part changed. As upstream's, a version no longer served keeps
// its part until the CRD goes.
func (m *OpenAPIMetrics) syncV3Locked(name string, crd *apiextensionsv1.CustomResourceDefinition) {
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
		reason := "update"
		if m.v3Docs[gv] == nil {
			reason = "add"
			m.v3Docs[gv] = map[string]string{}
		}
		fp := v3Fingerprint(crd, v)
		if old, ok := m.v3Docs[gv][name]; ok && old == fp {
			continue
		}
		m.v3Docs[gv][name] = fp
		m.v3.WithLabelValues(gv.Group, gv.Version, name, reason)
	}
}

// v3Fingerprint stands for what a CRD version contributes to its
// group-version's OpenAPI v3 document (upstream compares the documents
// it builds): the names, scope and the version's schema, subresources and
// selectable fields.
func v3Fingerprint(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion) string {
	b, err := json.Marshal(struct {
		Names            apiextensionsv1.CustomResourceDefinitionNames
		Scope            apiextensionsv1.ResourceScope
		Schema           *apiextensionsv1.CustomResourceValidation
		Subresources     *apiextensionsv1.CustomResourceSubresources
		SelectableFields []apiextensionsv1.SelectableField
	}{crd.Spec.Names, crd.Spec.Scope, v.Schema, v.Subresources, v.SelectableFields})
	if err != nil {
		return ""
	}
	return string(b)
}
