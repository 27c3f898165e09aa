package apiextensions

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCustomResourceRoutes: requests a custom resource's paths do not
// serve as such, answered as upstream's crdHandler answers them; every
// expectation is what kube-apiserver v1.37.2 answered to the same request
// (a namespaced CRD with status and scale, dryRun=All, body "{}").
func TestCustomResourceRoutes(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crd := scaleCRD()
	if _, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	r := ts.dynamic(t).Resource(gvr("scale.example.com", "v1", "scalers")).Namespace("ns1")
	s1 := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(`{"apiVersion":"scale.example.com/v1","kind":"Scaler","metadata":{"name":"s1"},"spec":{"replicas":1}}`), &s1.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Create(ctx, s1, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const (
		coll = "/apis/scale.example.com/v1/namespaces/ns1/scalers"
		item = coll + "/s1"
	)
	notSupported := func(verb string) string {
		return verb + ` is not supported on resources of kind "scalers.scale.example.com"`
	}
	cases := []struct {
		method, path string
		code         int
		message      string // "" for the chain's plain 404
	}{
		{"PUT", coll, 400, "name must be provided"},
		{"PATCH", coll, 415, "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"},
		{"OPTIONS", coll, 405, notSupported("")},
		{"POST", item, 400, "the object provided is unrecognized (must be of type Scaler): Object 'Kind' is missing in '{}' ({})"},
		{"OPTIONS", item, 405, notSupported("")},
		{"POST", item + "/status", 405, notSupported("create")},
		{"DELETE", item + "/status", 405, notSupported("delete")},
		{"POST", item + "/scale", 405, notSupported("create")},
		{"DELETE", item + "/scale", 405, notSupported("delete")},
		{"GET", item + "/foo", 404, `scalers.scale.example.com "s1" not found`},
		{"PUT", "/apis/scale.example.com/v1/scalers", 404, ""},
		{"GET", "/apis/scale.example.com/v1/scalers/s1", 404, ""},
		{"GET", "/apis/scale.example.com/v1/namespaces/ns1/nopes", 404, ""},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			code, body := ts.do(t, tc.method, tc.path+"?dryRun=All", "{}", "Content-Type", "application/json")
			if tc.message == "" {
				if code != tc.code || string(body) != "404 page not found\n" {
					t.Errorf("got %d %q, want the plain 404", code, body)
				}
				return
			}
			var s metav1.Status
			if err := json.Unmarshal(body, &s); err != nil || code != tc.code || s.Message != tc.message {
				t.Errorf("got %d %s, want %d %q", code, body, tc.code, tc.message)
			}
		})
	}
	// The collection still lists across namespaces.
	if code, body := ts.do(t, http.MethodGet, "/apis/scale.example.com/v1/scalers", ""); code != http.StatusOK {
		t.Errorf("list across namespaces: %d %s", code, body)
	}
}
