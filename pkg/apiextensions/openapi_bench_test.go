package apiextensions

import (
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
	"github.com/kapi-dev/kapi/pkg/openapi"
	"github.com/kapi-dev/kapi/pkg/server"
)

func benchCRDs() []*apiextensionsv1.CustomResourceDefinition {
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 300)
	for i := range crds {
		crd := crdtest.NewCRD(fmt.Sprintf("g%d.example.com", i), "widgets", "Widget", apiextensionsv1.NamespaceScoped)
		crd.Status.AcceptedNames = crd.Spec.Names
		crd.Status.AcceptedNames.ListKind = "WidgetList"
		crd.Status.AcceptedNames.Singular = "widget"
		crds[i] = crd
	}
	return crds
}

func newBenchCROpenAPI(b *testing.B) (*server.OpenAPI, *crOpenAPI) {
	api := server.NewOpenAPI("Kubernetes", "v0")
	o, err := newCROpenAPI(api, openapi.Default())
	if err != nil {
		b.Fatal(err)
	}
	return api, o
}

// BenchmarkCROpenAPISet measures what serving a CRD costs in OpenAPI work
// (each CRD its own group): what start pays per stored CRD.
func BenchmarkCROpenAPISet(b *testing.B) {
	_, o := newBenchCROpenAPI(b)
	crds := benchCRDs()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		crd := crds[i%len(crds)]
		i++
		o.set(schema.GroupVersion{Group: crd.Spec.Group, Version: "v1"}, []*apiextensionsv1.CustomResourceDefinition{crd})
	}
}

// BenchmarkCROpenAPIV2Parts measures building the v2 parts of 300 CRDs
// (each its own group), which the first request of /openapi/v2 after
// they are served pays.
func BenchmarkCROpenAPIV2Parts(b *testing.B) {
	crds := benchCRDs()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		api, o := newBenchCROpenAPI(b)
		for _, crd := range crds {
			o.set(schema.GroupVersion{Group: crd.Spec.Group, Version: "v1"}, []*apiextensionsv1.CustomResourceDefinition{crd})
		}
		b.StartTimer()
		if !api.HasV2Definition("com.example.g0.v1.Widget") {
			b.Fatal("no v2 definition of the first CRD")
		}
	}
}
