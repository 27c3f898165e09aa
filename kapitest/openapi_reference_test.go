package kapitest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// referenceDir holds documents a real kube-apiserver v1.37.2 served on
// loopback (k8s.io/kubernetes v1.37.2, token and client-certificate
// authentication, service-account issuer discovery served, no
// controllers, no aggregated APIServices) with one CRD created,
// crds/gadgets.e.example.com.yaml (the kubectl-applied manifest):
//
//	curl -H "Authorization: Bearer ..." https://127.0.0.1:<port>/openapi/v2 | jq -S . | gzip -9n > v2.json.gz
//	curl ... /openapi/v3 | jq -r '.paths|keys[]' > v3-index.txt
//	curl ... /openapi/v3/<path> | jq -S . [| gzip -9n] > v3-<path, "/" as "_">.json[.gz]
//
// for the discovery documents (api, apis, apis/apps, version,
// .well-known/openid-configuration, openid/v1/jwks), api/v1 and the
// custom resource's apis/e.example.com/v1, captured 2026-11-27.
const referenceDir = "testdata/openapi-v1.37.2"

// TestOpenAPIDocumentsMatchKubeAPIServer compares kapi's OpenAPI
// documents, decoded, with kube-apiserver v1.37.2's (referenceDir) for the
// same API and CRD: the whole v2 document (paths, definitions, shared
// parameters, security, info), the v3 index's documents, and the v3
// documents of the discovery roots, the core group and the custom
// resource.
func TestOpenAPIDocumentsMatchKubeAPIServer(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithCRDs(kapitest.CRDInstallOptions{
		Paths: []string{filepath.Join(referenceDir, "crds")}, ErrorIfPathMissing: true,
	}))
	rc := kubernetes.NewForConfigOrDie(srv.Config).Discovery().RESTClient()

	t.Run("v2", func(t *testing.T) {
		want := readReference(t, "v2.json.gz")
		// The custom resource's part is added a moment after the CRD is
		// served.
		got := eventuallyEqual(t, rc, "/openapi/v2", want)
		if got != nil {
			reportDifferences(t, "/openapi/v2", want, got)
		}
	})
	t.Run("v3 index", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(referenceDir, "v3-index.txt"))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Fields(string(b))
		var got []string
		deadline := time.Now().Add(30 * time.Second)
		for {
			var index struct {
				Paths map[string]struct {
					URL string `json:"serverRelativeURL"`
				} `json:"paths"`
			}
			if err := json.Unmarshal(get(t, rc, "/openapi/v3"), &index); err != nil {
				t.Fatal(err)
			}
			got = got[:0]
			for k, v := range index.Paths {
				got = append(got, k)
				if !strings.HasPrefix(v.URL, "/openapi/v3/"+k+"?hash=") {
					t.Errorf("%s: serverRelativeURL %q", k, v.URL)
				}
			}
			sort.Strings(got)
			if reflect.DeepEqual(got, want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("v3 index differs from kube-apiserver's\ngot  %q\nwant %q", got, want)
		}
	})
	for _, path := range []string{
		"api", "apis", "apis/apps", "version", ".well-known/openid-configuration", "openid/v1/jwks",
		"api/v1", "apis/e.example.com/v1",
	} {
		t.Run("v3 "+path, func(t *testing.T) {
			file := "v3-" + strings.TrimPrefix(strings.ReplaceAll(path, "/", "_"), ".") + ".json"
			if path == "api/v1" || path == "apis/e.example.com/v1" {
				file += ".gz"
			}
			want := readReference(t, file)
			if got := eventuallyEqual(t, rc, "/openapi/v3/"+path, want); got != nil {
				reportDifferences(t, "/openapi/v3/"+path, want, got)
			}
		})
	}
}

func readReference(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(referenceDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func get(t *testing.T, rc rest.Interface, path string) []byte {
	t.Helper()
	b, err := rc.Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return b
}

// eventuallyEqual returns nil once the decoded document at path equals
// want, else (after 30s) the last document.
func eventuallyEqual(t *testing.T, rc rest.Interface, path string, want any) any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got any
		if err := json.Unmarshal(get(t, rc, path), &got); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if reflect.DeepEqual(got, want) {
			return nil
		}
		if time.Now().After(deadline) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reportDifferences fails t with the first differences of got from want,
// by JSON pointer-like path.
func reportDifferences(t *testing.T, doc string, want, got any) {
	t.Helper()
	var diffs []string
	var walk func(p string, w, g any)
	walk = func(p string, w, g any) {
		if len(diffs) >= 40 {
			return
		}
		wm, wok := w.(map[string]any)
		gm, gok := g.(map[string]any)
		if wok && gok {
			keys := map[string]bool{}
			for k := range wm {
				keys[k] = true
			}
			for k := range gm {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				wv, win := wm[k]
				gv, gin := gm[k]
				switch {
				case !gin:
					diffs = append(diffs, fmt.Sprintf("%s/%s: missing", p, k))
				case !win:
					diffs = append(diffs, fmt.Sprintf("%s/%s: not upstream's: %.200s", p, k, js(gv)))
				default:
					walk(p+"/"+k, wv, gv)
				}
			}
			return
		}
		if !reflect.DeepEqual(w, g) {
			diffs = append(diffs, fmt.Sprintf("%s: got %.200s, want %.200s", p, js(g), js(w)))
		}
	}
	walk("", want, got)
	t.Errorf("%s differs from kube-apiserver v1.37.2's:\n  %s", doc, strings.Join(diffs, "\n  "))
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
