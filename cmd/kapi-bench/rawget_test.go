package main

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// The raw get row's client sends an authenticated JSON GET of the object's
// path over HTTP/2 and accepts only a 200 whose body names the object.
func TestRawGetter(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 || r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Accept") != "application/json" {
			http.Error(w, "bad request "+r.Proto, http.StatusBadRequest)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, benchCollection+"/")
		switch name {
		case "t1":
			w.Write([]byte(`{"apiVersion":"bench.kapi.dev/v1","kind":"BenchThing","metadata":{"name":"t1","namespace":"bench"}}`))
		case "other":
			w.Write([]byte(`{"metadata":{"name":"t1"}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"kind":"Status","reason":"NotFound"}`))
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	g, err := newRawGetter(&rest.Config{Host: srv.URL, BearerToken: "tok", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, benchCollection)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := g.get(ctx, "t1"); err != nil {
		t.Errorf("get t1: %v", err)
	}
	if err := g.get(ctx, "missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("get missing: %v, want the 404", err)
	}
	if err := g.get(ctx, "other"); err == nil || !strings.Contains(err.Error(), "does not name") {
		t.Errorf("get other: %v, want a refusal of another object", err)
	}
}
