package kapitest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// The protobuf /openapi/v2 that client-go's discovery and kubectl ask for
// is exactly what gnostic's parser and proto.Marshal make of the JSON
// document (kapi assembles it from per-entry encodings), on a whole server
// with CRDs, also after a CRD is added.
func TestOpenAPIV2ProtobufMatchesJSON(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithCRDs(kapitest.CRDInstallOptions{Paths: []string{"testdata/crds"}, ErrorIfPathMissing: true}))
	ctx := context.Background()
	rc := kubernetes.NewForConfigOrDie(srv.Config).Discovery().RESTClient()
	get := func(accept string) []byte {
		t.Helper()
		b, err := rc.Get().AbsPath("/openapi/v2").SetHeader("Accept", accept).DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET /openapi/v2 (%s): %v", accept, err)
		}
		return b
	}
	check := func(step, wantDef string) {
		t.Helper()
		js := get("application/json")
		var doc struct {
			Definitions map[string]json.RawMessage `json:"definitions"`
		}
		if err := json.Unmarshal(js, &doc); err != nil {
			t.Fatal(err)
		}
		if _, ok := doc.Definitions[wantDef]; !ok {
			t.Fatalf("%s: the v2 document lacks %s", step, wantDef)
		}
		d, err := openapi_v2.ParseDocument(js)
		if err != nil {
			t.Fatalf("%s: parse the JSON document: %v", step, err)
		}
		want, err := proto.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := get("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"); !bytes.Equal(got, want) {
			t.Fatalf("%s: protobuf document (%d bytes) is not the JSON document's (%d bytes)", step, len(got), len(want))
		}
	}
	check("at start", "dev.kapi.test.v1.Widget")

	crds := apiextensionsclient.NewForConfigOrDie(srv.Config).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, thingCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		js := get("application/json")
		if bytes.Contains(js, []byte(`"dev.kapi.objects.v1.Thing"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("things never appeared in the v2 document")
		}
		time.Sleep(50 * time.Millisecond)
	}
	check("after a CRD is added", "dev.kapi.objects.v1.Thing")
}
