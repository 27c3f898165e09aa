package apiextensions

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

func scaleCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := crdtest.NewCRD("scale.example.com", "scalers", "Scaler", apiextensionsv1.NamespaceScoped)
	v := &crd.Spec.Versions[0]
	v.Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				// int-or-string, so that a string can be stored.
				"replicas": {XIntOrString: true},
				"other":    {Type: "string"},
			}},
			"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"replicas": {Type: "integer"},
				"selector": {Type: "string"},
			}},
		},
	}
	v.AdditionalPrinterColumns = nil
	v.Subresources.Scale = &apiextensionsv1.CustomResourceSubresourceScale{
		SpecReplicasPath:   ".spec.replicas",
		StatusReplicasPath: ".status.replicas",
		LabelSelectorPath:  ptr.To(".status.selector"),
	}
	return crd
}

func TestScaleSubresource(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	// The CRD starts without its scale subresource: "str", whose
	// replicas are a string, can only be stored then (with it, writes
	// check the replicas paths, as upstream's ValidateScaleSpec).
	crd := scaleCRD()
	scale := crd.Spec.Versions[0].Subresources.Scale
	crd.Spec.Versions[0].Subresources.Scale = nil
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	r := ts.dynamic(t).Resource(gvr("scale.example.com", "v1", "scalers")).Namespace("ns1")
	eventually(t, waitTimeout, "scalers served", func() bool {
		_, err := r.List(ctx, metav1.ListOptions{})
		return err == nil
	})
	str := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(`{"apiVersion":"scale.example.com/v1","kind":"Scaler","metadata":{"name":"str"},"spec":{"replicas":"3"}}`), &str.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Create(ctx, str, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Versions[0].Subresources.Scale = scale
	if _, err := crds.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitTimeout, "the scale subresource served", func() bool {
		_, err := r.Get(ctx, "str", metav1.GetOptions{}, "scale")
		return !apierrors.IsNotFound(err)
	})
	// Now a write with replicas that are not an integer is refused.
	if _, err := r.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scale.example.com/v1", "kind": "Scaler",
		"metadata": map[string]any{"name": "str2"}, "spec": map[string]any{"replicas": "3"},
	}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `.spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3 is of the type string, expected int64`) {
		t.Fatalf("create with string replicas: got %v, want 422 as upstream's ValidateScaleSpec", err)
	}

	// Discovery lists scalers/scale as autoscaling/v1 Scale.
	rl, err := ts.discovery(t).ServerResourcesForGroupVersion("scale.example.com/v1")
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, res := range rl.APIResources {
		if res.Name == "scalers/scale" {
			found = true
			if res.Group != "autoscaling" || res.Version != "v1" || res.Kind != "Scale" || strings.Join(res.Verbs, ",") != "get,patch,update" {
				t.Fatalf("scalers/scale discovery: got %+v, want autoscaling/v1 Scale with get,patch,update", res)
			}
		}
	}
	if !found {
		t.Fatalf("scalers/scale not in discovery: %+v", rl.APIResources)
	}
	// In the order of upstream's discovery controller
	// (customresource_discovery_controller.go, apiextensions-apiserver
	// v0.37.2; kube-apiserver v1.37.2 answers the same): the resource
	// with its verbs in that controller's order, then status, then scale.
	var listed []string
	for _, res := range rl.APIResources {
		listed = append(listed, res.Name+":"+strings.Join(res.Verbs, ","))
	}
	if want := []string{"scalers:delete,deletecollection,get,list,patch,create,update,watch", "scalers/status:get,patch,update", "scalers/scale:get,patch,update"}; !slices.Equal(listed, want) {
		t.Errorf("discovery lists %q, want %q", listed, want)
	}

	for _, y := range []string{
		`{"apiVersion":"scale.example.com/v1","kind":"Scaler","metadata":{"name":"s1"},"spec":{"replicas":1}}`,
		`{"apiVersion":"scale.example.com/v1","kind":"Scaler","metadata":{"name":"empty"},"spec":{"other":"x"}}`,
	} {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(y), &u.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.UpdateStatus(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scale.example.com/v1", "kind": "Scaler",
		"metadata": map[string]any{"name": "s1", "resourceVersion": mustGet(t, r, "s1").GetResourceVersion()},
		"spec":     map[string]any{"replicas": int64(1)},
		"status":   map[string]any{"replicas": int64(1), "selector": "app=s1"},
	}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	base := "/apis/scale.example.com/v1/namespaces/ns1/scalers/"
	for _, tc := range []struct {
		name, method, path, ct, body string
		code                         int
		want                         string
	}{
		{"get", http.MethodGet, "s1/scale", "", "", 200, `"kind":"Scale","apiVersion":"autoscaling/v1"`},
		{"get selector", http.MethodGet, "s1/scale", "", "", 200, `"status":{"replicas":1,"selector":"app=s1"}`},
		{"put", http.MethodPut, "s1/scale?fieldManager=scaler", "application/json",
			`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"s1","namespace":"ns1"},"spec":{"replicas":3}}`, 200, `"spec":{"replicas":3}`},
		{"merge patch", http.MethodPatch, "s1/scale", "application/merge-patch+json", `{"spec":{"replicas":5}}`, 200, `"spec":{"replicas":5}`},
		{"negative", http.MethodPatch, "s1/scale", "application/merge-patch+json", `{"spec":{"replicas":-1}}`, 422,
			// As kube-apiserver v1.37.2: the custom resource is refused, not the Scale.
			`"message":"Scaler.scale.example.com \"s1\" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer"`},
		{"stale resourceVersion", http.MethodPut, "s1/scale", "application/json",
			`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"s1","namespace":"ns1","resourceVersion":"1"},"spec":{"replicas":3}}`, 409, "the object has been modified"},
		{"wrong kind", http.MethodPut, "s1/scale", "application/json",
			`{"apiVersion":"scale.example.com/v1","kind":"Scaler","metadata":{"name":"s1"},"spec":{"replicas":3}}`, 400, ""},
		{"missing spec replicas: get", http.MethodGet, "empty/scale", "", "", 500, `the spec replicas field \".spec.replicas\" does not exist`},
		{"missing spec replicas: patch without replicas", http.MethodPatch, "empty/scale", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`, 400,
			`the spec replicas field \".spec.replicas\" cannot be empty`},
		{"missing spec replicas: patch setting them", http.MethodPatch, "empty/scale", "application/merge-patch+json", `{"spec":{"replicas":2}}`, 200, `"spec":{"replicas":2}`},
		{"not an integer", http.MethodGet, "str/scale", "", "", 500, "expected int64"},
		{"not found", http.MethodGet, "nope/scale", "", "", 404, ""},
		{"strategic merge patch", http.MethodPatch, "s1/scale", "application/strategic-merge-patch+json", `{"spec":{"replicas":5}}`, 415, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.ct != "" {
				headers = []string{"Content-Type", tc.ct}
			}
			code, body := ts.do(t, tc.method, base+tc.path, tc.body, headers...)
			if code != tc.code || !strings.Contains(string(body), tc.want) {
				t.Fatalf("got %d %s, want %d containing %s", code, body, tc.code, tc.want)
			}
			if code == 200 {
				var s autoscalingv1.Scale
				if err := json.Unmarshal(body, &s); err != nil || s.Name != strings.Split(tc.path, "/")[0] {
					t.Fatalf("not a Scale of %s: %v %s", tc.path, err, body)
				}
			}
		})
	}

	// Media types, as kube-apiserver v1.37.2 answered the same requests:
	// a Scale is not written in protobuf (406, in protobuf), but its
	// metadata is; a Table has Name, Desired, Available and Age.
	code, body := ts.do(t, http.MethodGet, base+"s1/scale", "", "Accept", "application/vnd.kubernetes.protobuf")
	if code != http.StatusNotAcceptable || !strings.HasPrefix(string(body), "k8s\x00") {
		t.Fatalf("scale as protobuf: got %d %q, want 406 in protobuf", code, body)
	}
	code, body = ts.do(t, http.MethodGet, base+"s1/scale", "", "Accept", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
	if code != http.StatusOK || !strings.HasPrefix(string(body), "k8s\x00") || !strings.Contains(string(body), "PartialObjectMetadata") {
		t.Fatalf("scale metadata as protobuf: got %d %q, want 200 protobuf", code, body)
	}
	code, body = ts.do(t, http.MethodGet, base+"s1/scale", "", "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if err := json.Unmarshal(body, &table); code != http.StatusOK || err != nil {
		t.Fatalf("scale as Table: got %d %s (%v)", code, body, err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name+":"+c.Type)
	}
	if want := []string{"Name:string", "Desired:integer", "Available:integer", "Age:date"}; !slices.Equal(cols, want) {
		t.Errorf("scale Table columns: got %v, want %v", cols, want)
	}
	if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 4 || table.Rows[0].Cells[0] != "s1" || table.Rows[0].Cells[1] != float64(5) {
		t.Errorf("scale Table rows: got %+v", table.Rows)
	}
	// A Scale is read in protobuf (upstream's scale scope decodes with
	// the built-in codecs).
	var sc autoscalingv1.Scale
	if code, body = ts.do(t, http.MethodGet, base+"s1/scale", "", "Accept", "application/json"); code != http.StatusOK {
		t.Fatalf("get scale: %d %s", code, body)
	}
	if err := json.Unmarshal(body, &sc); err != nil {
		t.Fatal(err)
	}
	pbInfo, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	var pb bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(pbInfo.Serializer, autoscalingv1.SchemeGroupVersion).Encode(&sc, &pb); err != nil {
		t.Fatal(err)
	}
	code, body = ts.do(t, http.MethodPut, base+"s1/scale", pb.String(), "Content-Type", runtime.ContentTypeProtobuf, "Accept", "application/json")
	if code != http.StatusOK {
		t.Fatalf("scale update in protobuf: got %d %s, want 200", code, body)
	}

	// The custom resource changed through /scale: replicas, generation,
	// and the scale manager owns spec.replicas.
	u := mustGet(t, r, "s1")
	if got, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); got != 5 {
		t.Fatalf("spec.replicas: got %d, want 5", got)
	}
	if got := u.GetGeneration(); got != 3 {
		t.Fatalf("generation after two scale changes: got %d, want 3", got)
	}
	var owner bool
	for _, e := range u.GetManagedFields() {
		if e.Subresource == "scale" && e.APIVersion == "scale.example.com/v1" && strings.Contains(string(e.FieldsV1.Raw), `"f:replicas"`) {
			owner = true
		}
	}
	if !owner {
		t.Fatalf("no scale manager owns spec.replicas: %+v", u.GetManagedFields())
	}
}

func mustGet(t *testing.T, r interface {
	Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error)
}, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := r.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}
