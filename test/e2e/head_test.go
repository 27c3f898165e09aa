package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestHeadAsUpstream: HEAD is 405 on what kube-apiserver serves with
// go-restful (built-in resources and their subresources, /api, /api/v1,
// /apis/<built-in group>/<version>, /version: the method is matched before
// anything else, so a missing object is 405 too) and 200 elsewhere (custom
// resources, served by verb; /apis and group discovery; /healthz;
// /openapi/v2). Every expected code is kube-apiserver v1.37.2's answer to
// the same HEAD (2026-11-27).
func TestHeadAsUpstream(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithCRDs(kapitest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.w.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "w.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
		},
	}}}))
	client, err := rest.HTTPClientFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for path, want := range map[string]int{
		"/api/v1/namespaces/default/configmaps":                  405,
		"/api/v1/namespaces/default/configmaps/kube-root-ca.crt": 405,
		"/api/v1/namespaces":                                     405,
		"/api/v1/namespaces/default/pods/x/log":                  405,
		"/apis/apps/v1/namespaces/default/deployments/x/scale":   405,
		"/api/v1":                        405,
		"/api":                           405,
		"/apis/apps/v1":                  405,
		"/version":                       405,
		"/apis/w.example.com/v1/widgets": 200,
		"/apis/w.example.com/v1/namespaces/default/widgets/x": 404,
		"/apis/w.example.com/v1":                              200,
		"/apis/w.example.com":                                 200,
		"/apis/apps":                                          200,
		"/apis":                                               200,
		"/healthz":                                            200,
		"/openapi/v2":                                         200,
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, srv.Config.Host+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("HEAD %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("HEAD %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
