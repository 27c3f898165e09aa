package e2e

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestDiscoveryAggregationCount: aggregator_discovery_aggregation_count_total
// counts as kube-apiserver v1.37.2 counts (read from the reference binary
// with the same requests): 0 at start, one per aggregated list (/apis',
// /api's) served for the first time since it changed, none for a list
// served again unchanged or for the legacy documents; a CRD established
// changes /apis' list. The garbage collector and quota controllers, which
// kube-controller-manager runs beside the reference, are off: their
// discovery would count too.
func TestDiscoveryAggregationCount(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithFlags("--controllers=*,-garbage-collector-controller,-resourcequota-controller"))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	count := func() int {
		t.Helper()
		lines := familyLines(metricsText(t, srv.Config), "aggregator_discovery_aggregation_count_total")
		want := []string{
			"# HELP aggregator_discovery_aggregation_count_total [ALPHA] Counter of number of times discovery was aggregated",
			"# TYPE aggregator_discovery_aggregation_count_total counter",
		}
		if len(lines) != 3 || !slices.Equal(lines[:2], want) {
			t.Fatalf("got %q", lines)
		}
		n, err := strconv.Atoi(strings.TrimPrefix(lines[2], "aggregator_discovery_aggregation_count_total "))
		if err != nil {
			t.Fatalf("%q: %v", lines[2], err)
		}
		return n
	}
	get := func(path string, aggregated bool) {
		t.Helper()
		req := cs.CoreV1().RESTClient().Get().AbsPath(path)
		if aggregated {
			req = req.SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		}
		if _, err := req.DoRaw(context.Background()); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	step := func(what string, want int) {
		t.Helper()
		if got := count(); got != want {
			t.Fatalf("%s: got %d, want %d", what, got, want)
		}
	}
	step("start", 0)
	get("/apis", false)
	get("/api", false)
	step("legacy documents", 0)
	get("/apis", true)
	step("/apis", 1)
	get("/apis", true)
	step("/apis again", 1)
	get("/api", true)
	get("/api", true)
	step("/api", 2)

	crds := apiextensionsclient.NewForConfigOrDie(srv.Config).ApiextensionsV1().CustomResourceDefinitions()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.m24c.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "m24c.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)}},
			}},
		},
	}
	if _, err := crds.Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the CRD's group in discovery", func() error {
		_, err := cs.Discovery().ServerResourcesForGroupVersion("m24c.example.com/v1")
		return err
	})
	step("CRD established, nothing aggregated asked for", 2)
	get("/apis", true)
	get("/apis", true)
	step("/apis after the CRD", 3)
	get("/api", true)
	step("/api unchanged", 3)
}
