package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/kapitest"
)

// TestRequestedDeprecatedAPIs: apiserver_requested_deprecated_apis and
// the audit annotations of requests for deprecated APIs, as
// kube-apiserver v1.37.2 records them (k8s.io/apiserver v0.37.2
// pkg/endpoints/metrics MonitorRequest, called by the installer's routes
// of a type deprecated at the served version, and by
// apiextensions-apiserver's crdHandler for a deprecated CRD version with
// removed_release ""; the HELP text and series below are the reference's
// after the same requests). A request is recorded once its route's
// handler has answered, whatever the answer (the 404 of a missing
// Endpoints too), and not when no route serves it (a CRD version without
// the scale subresource; a namespaced CRD's item without a namespace).
func TestRequestedDeprecatedAPIs(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	srv := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) {
		o.AuditLogPath = auditPath
		o.Flags = append(o.Flags, "--audit-policy-file="+testaudit.MetadataPolicy(t))
	}))
	client, err := rest.HTTPClientFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string, wantCode int) {
		t.Helper()
		req, err := http.NewRequest(method, srv.Config.Host+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != wantCode {
			t.Fatalf("%s %s: got %d, want %d: %s", method, path, resp.StatusCode, wantCode, b)
		}
	}
	const family = "apiserver_requested_deprecated_apis"
	// Upstream's gauge has no series before a request: the family is
	// not in /metrics at all.
	if text := metricsText(t, srv.Config); strings.Contains(text, family) {
		t.Fatalf("%s before any request:\n%s", family, familyLines(text, family))
	}

	do("GET", "/api/v1/namespaces/default/endpoints", "", 200)
	do("GET", "/api/v1/namespaces/default/endpoints/missing", "", 404)
	do("GET", "/api/v1/componentstatuses", "", 200)
	do("GET", "/api/v1/namespaces/default/configmaps", "", 200)

	crds := apiextensionsclient.NewForConfigOrDie(srv.Config).ApiextensionsV1().CustomResourceDefinitions()
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptrTo(true)}}
	status := &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.deprecated.e2e.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "deprecated.e2e.kapi.dev",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1beta1", Served: true, Deprecated: true, Schema: schema, Subresources: status},
				{Name: "v1", Served: true, Storage: true, Schema: schema, Subresources: status},
			},
		},
	}
	if _, err := crds.Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "CRD established", func() error {
		got, err := crds.Get(context.Background(), crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", got.Status.Conditions)
	})
	base := "/apis/deprecated.e2e.kapi.dev/v1beta1"
	do("POST", base+"/namespaces/default/widgets", `{"apiVersion":"deprecated.e2e.kapi.dev/v1beta1","kind":"Widget","metadata":{"name":"w1"}}`, 201)
	do("GET", base+"/namespaces/default/widgets/w1/status", "", 200)
	do("GET", base+"/namespaces/default/widgets/w1/scale", "", 404) // no scale: no route
	do("GET", base+"/widgets/w1", "", 404)                          // cluster-scoped item of a namespaced CRD: no route
	do("GET", base+"/widgets", "", 200)                             // list across namespaces
	do("GET", "/apis/deprecated.e2e.kapi.dev/v1/namespaces/default/widgets/w1", "", 200)

	text := metricsText(t, srv.Config)
	want := []string{
		"# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.",
		"# TYPE apiserver_requested_deprecated_apis gauge",
		`apiserver_requested_deprecated_apis{group="",removed_release="",resource="componentstatuses",subresource="",version="v1"} 1`,
		`apiserver_requested_deprecated_apis{group="",removed_release="",resource="endpoints",subresource="",version="v1"} 1`,
		`apiserver_requested_deprecated_apis{group="deprecated.e2e.kapi.dev",removed_release="",resource="widgets",subresource="",version="v1beta1"} 1`,
		`apiserver_requested_deprecated_apis{group="deprecated.e2e.kapi.dev",removed_release="",resource="widgets",subresource="status",version="v1beta1"} 1`,
	}
	if got := familyLines(text, family); !slices.Equal(got, want) {
		t.Errorf("/metrics:\ngot  %q\nwant %q", got, want)
	}

	// The audit events: k8s.io/deprecated=true on each recorded request
	// (no k8s.io/removed-release: none of these APIs names one), on no
	// other.
	wantAnnotated := map[string]bool{
		"/api/v1/namespaces/default/endpoints":                           true,
		"/api/v1/namespaces/default/endpoints/missing":                   true,
		"/api/v1/componentstatuses":                                      true,
		"/api/v1/namespaces/default/configmaps":                          false,
		base + "/namespaces/default/widgets":                             true,
		base + "/namespaces/default/widgets/w1/status":                   true,
		base + "/namespaces/default/widgets/w1/scale":                    false,
		base + "/widgets/w1":                                             false,
		base + "/widgets":                                                true,
		"/apis/deprecated.e2e.kapi.dev/v1/namespaces/default/widgets/w1": false,
	}
	eventually(t, 10*time.Second, "the audit events", func() error {
		got, err := deprecatedAnnotations(auditPath, wantAnnotated)
		if err != nil {
			return err
		}
		if !maps.Equal(got, wantAnnotated) {
			return fmt.Errorf("annotated: got %v, want %v", got, wantAnnotated)
		}
		return nil
	})
}

// deprecatedAnnotations reads the ResponseComplete events of the request
// URIs of paths from the audit log at path: whether each carries
// k8s.io/deprecated=true. An error if one is missing or carries another
// value, or a removal release.
func deprecatedAnnotations(path string, paths map[string]bool) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Stage       string            `json:"stage"`
			RequestURI  string            `json:"requestURI"`
			Annotations map[string]string `json:"annotations"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" {
			continue
		}
		if _, ok := paths[ev.RequestURI]; !ok {
			continue
		}
		v, ok := ev.Annotations["k8s.io/deprecated"]
		if ok && v != "true" {
			return nil, fmt.Errorf("%s: k8s.io/deprecated=%q", ev.RequestURI, v)
		}
		if r, ok := ev.Annotations["k8s.io/removed-release"]; ok {
			return nil, fmt.Errorf("%s: k8s.io/removed-release=%q", ev.RequestURI, r)
		}
		out[ev.RequestURI] = ok
	}
	if len(out) != len(paths) {
		return nil, fmt.Errorf("events of %d of the %d requests", len(out), len(paths))
	}
	return out, sc.Err()
}

// metricsText is /metrics in the text format, read with the admin
// credentials.
func metricsText(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	body, err := mustClientset(t, cfg).CoreV1().RESTClient().Get().AbsPath("/metrics").SetHeader("Accept", "text/plain").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// familyLines returns the lines of text about family (its HELP, TYPE and
// samples), in order.
func familyLines(text, family string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "# HELP "+family+" ") || strings.HasPrefix(l, "# TYPE "+family+" ") ||
			strings.HasPrefix(l, family+"{") || strings.HasPrefix(l, family+" ") {
			out = append(out, l)
		}
	}
	return out
}
