package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// TestAPIServicesStoredAsJSON: kapi stores APIServices in etcd as
// kube-apiserver v1.37.2's aggregator does, as compact JSON with a
// trailing newline (its legacy codec), not as protobuf like the built-in
// types; an APIService stored as protobuf (by an older kapi) still reads,
// and is stored as JSON once written.
func TestAPIServicesStoredAsJSON(t *testing.T) {
	te := startTestEtcd(t, nil)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{te.url()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const prefix = "/kapi-apiservices"
	const key = prefix + "/apiregistration.k8s.io/apiservices/"

	// An older kapi's data: one APIService as protobuf.
	old := &apiregistrationv1.APIService{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"},
		ObjectMeta: metav1.ObjectMeta{Name: "v1.old.example.com", UID: "0c6f5b8e-7a55-4c8e-9d0e-000000000001", CreationTimestamp: metav1.Now()},
		Spec: apiregistrationv1.APIServiceSpec{Group: "old.example.com", Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 15,
			Service:               &apiregistrationv1.ServiceReference{Namespace: "default", Name: "old"},
			InsecureSkipTLSVerify: true},
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	pb, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, apiregistrationv1.SchemeGroupVersion), old)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pb, []byte("k8s\x00")) {
		t.Fatalf("not protobuf: %q", pb[:min(len(pb), 16)])
	}
	if _, err := cli.Put(ctx, key+old.Name, string(pb)); err != nil {
		t.Fatal(err)
	}

	r := startKapi(t, nil, withExternalEtcd(te), func(o *app.Options) { o.Storage.Prefix = prefix })
	c := r.client(false)

	// The protobuf one reads.
	res := do(c, http.MethodGet, r.base+"/apis/apiregistration.k8s.io/v1/apiservices/"+old.Name)
	var got apiregistrationv1.APIService
	if res.err != nil || res.code != http.StatusOK || json.Unmarshal([]byte(res.body), &got) != nil || got.Spec.Group != "old.example.com" {
		t.Fatalf("GET the protobuf APIService: %d %v %s", res.code, res.err, res.body)
	}

	// The server's own APIServices are stored as JSON.
	stored := func(name string) []byte {
		t.Helper()
		resp, err := cli.Get(ctx, key+name)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("%s in etcd: %v %v", name, resp, err)
		}
		return resp.Kvs[0].Value
	}
	checkJSON := func(name, group string) {
		t.Helper()
		v := stored(name)
		if !bytes.HasPrefix(v, []byte(`{"kind":"APIService","apiVersion":"apiregistration.k8s.io/v1","metadata":{"name":"`+name+`",`)) || !bytes.HasSuffix(v, []byte("}}\n")) {
			t.Fatalf("%s stored as %q, want kube-apiserver's JSON", name, v)
		}
		var svc apiregistrationv1.APIService
		if err := json.Unmarshal(v, &svc); err != nil || svc.Name != name || svc.Spec.Group != group || svc.ResourceVersion != "" {
			t.Fatalf("%s: %v, decoded %+v", name, err, svc)
		}
	}
	checkJSON("v1.apps", "apps")

	// A write of the protobuf one stores it as JSON.
	req, err := http.NewRequest(http.MethodPatch, r.base+"/apis/apiregistration.k8s.io/v1/apiservices/"+old.Name,
		strings.NewReader(`{"metadata":{"labels":{"written":"again"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("patch: %d", resp.StatusCode)
	}
	checkJSON(old.Name, "old.example.com")
}
