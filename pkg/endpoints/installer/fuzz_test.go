package installer

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	kapirest "github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

func fuzzHandler(t testing.TB) http.Handler {
	cms := newCMStore()
	g := &APIGroupVersion{
		GroupVersion: schema.GroupVersion{Version: "v1"},
		Storage: map[string]kapirest.Storage{
			"configmaps":        cms,
			"configmaps/status": &statusStore{cms},
			"namespaces":        nsStore{},
		},
		Logger: slog.New(slog.DiscardHandler),
	}
	h, _, err := g.Build()
	if err != nil {
		t.Fatal(err)
	}
	h = filters.WithWarningRecorder(h, slog.New(slog.DiscardHandler))
	return filters.WithRequestInfo(h, request.NewResolver(), slog.New(slog.DiscardHandler))
}

var fuzzMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
var fuzzPaths = []string{
	"/api/v1/namespaces/ns1/configmaps",
	"/api/v1/namespaces/ns1/configmaps/a",
	"/api/v1/namespaces/ns1/configmaps/a/status",
	"/api/v1/configmaps",
	"/api/v1/namespaces/x",
}
var fuzzContentTypes = []string{
	"", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
	"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "text/plain",
}

// FuzzRequest sends arbitrary query strings, bodies and Accept headers to
// every verb: the server never panics and never answers 5xx.
func FuzzRequest(f *testing.F) {
	f.Add(uint8(1), uint8(0), "", uint8(1), []byte(cmJSON), "")
	f.Add(uint8(0), uint8(0), "labelSelector=a%20in%20(b&limit=-1&continue=%%%", uint8(0), []byte(nil), "application/json;as=Table;v=v1;g=meta.k8s.io")
	f.Add(uint8(0), uint8(0), "watch=true&timeoutSeconds=1&resourceVersionMatch=x&sendInitialEvents=maybe", uint8(0), []byte(nil), "application/yaml")
	f.Add(uint8(2), uint8(1), "fieldValidation=Strict&dryRun=All&fieldManager=%00", uint8(2), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: 1, x: 2}\n"), "")
	f.Add(uint8(3), uint8(1), "", uint8(4), []byte(`[{"op":"move","from":"/a","path":"/a/b"}]`), "*/*")
	f.Add(uint8(3), uint8(1), "fieldValidation=Warn", uint8(6), []byte(`{"metadata":{"$patch":"delete"},"data":{"$retainKeys":[1]}}`), "")
	f.Add(uint8(4), uint8(1), "gracePeriodSeconds=abc&propagationPolicy=Foreground&orphanDependents=true", uint8(0), []byte(`{"preconditions":{"uid":7}}`), "application/vnd.kubernetes.protobuf")
	f.Add(uint8(1), uint8(0), "", uint8(3), []byte("k8s\x00\x0a\x02\x12"), "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1")
	f.Add(uint8(0), uint8(4), "includeObject=Object", uint8(0), []byte(nil), "application/json;as=Table;g=meta.k8s.io;v=v1;q=0.1, application/yaml;q=0.9")
	f.Fuzz(func(t *testing.T, m, p uint8, query string, ct uint8, body []byte, accept string) {
		h := fuzzHandler(t)
		// Seed an object so item paths reach the storage.
		seed := httptest.NewRequest("POST", fuzzPaths[0], bytes.NewReader([]byte(cmJSON)))
		h.ServeHTTP(httptest.NewRecorder(), seed)

		method := fuzzMethods[int(m)%len(fuzzMethods)]
		target := fuzzPaths[int(p)%len(fuzzPaths)]
		req, err := http.NewRequest(method, "http://kapi"+target, bytes.NewReader(body))
		if err != nil {
			t.Skip()
		}
		req.URL.RawQuery = query
		if c := fuzzContentTypes[int(ct)%len(fuzzContentTypes)]; c != "" {
			req.Header.Set("Content-Type", c)
		}
		req.Header.Set("Accept", accept)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(ctx))
		if rec.Code >= 500 {
			t.Fatalf("%s %s?%s (Content-Type %q, Accept %q, body %q): got %d %s", method, target, query,
				req.Header.Get("Content-Type"), accept, body, rec.Code, rec.Body.Bytes())
		}
		if rec.Code >= 400 && rec.Body.Len() == 0 {
			t.Fatalf("%s %s?%s: %d with an empty body, want a Status", method, target, query, rec.Code)
		}
	})
}
