package discovery

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Accept headers as clients send them.
const (
	acceptClientGo      = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
	acceptClientGoPeer  = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer," + acceptClientGo
	acceptKubectl127    = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
	acceptAggregatedPB  = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	acceptV2Beta1Only   = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
	contentTypeV2JSON   = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	contentTypeV2Beta1  = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
	contentTypeV2PB     = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	testExternalAddress = "10.0.0.1:6443"
)

func do(t *testing.T, h http.Handler, method, path, accept string, hdr ...string) *http.Response {
	t.Helper()
	r, err := http.NewRequest(method, "http://kapi.test"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	rec := newRecorder()
	h.ServeHTTP(rec, r)
	return rec.Result()
}

func body(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGolden(t *testing.T) {
	cases := []struct {
		name, path, accept string
		cfg                Config
		wantType           string
	}{
		{name: "api", path: "/api", accept: "application/json", wantType: "application/json"},
		{name: "apis", path: "/apis", accept: "application/json", wantType: "application/json"},
		{name: "apis-group-apps", path: "/apis/apps", accept: "application/json", wantType: "application/json"},
		{name: "apis-group-crd", path: "/apis/stable.example.com", accept: "application/json", wantType: "application/json"},
		{name: "api-aggregated", path: "/api", accept: acceptClientGo, wantType: contentTypeV2JSON},
		{name: "apis-aggregated", path: "/apis", accept: acceptClientGo, wantType: contentTypeV2JSON},
		{name: "apis-aggregated-v2beta1", path: "/apis", accept: acceptKubectl127, cfg: Config{ServeV2Beta1: true}, wantType: contentTypeV2Beta1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.ExternalAddress = testExternalAddress
			h := newManager(t, tc.cfg, allFixtures()...).Handler()

			resp := do(t, h, http.MethodGet, tc.path+"?pretty=true", tc.accept)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("got status %d, want 200", resp.StatusCode)
			}
			if got := resp.Header.Get("Content-Type"); got != tc.wantType {
				t.Errorf("got Content-Type %q, want %q", got, tc.wantType)
			}
			pretty := body(t, resp)
			var got bytes.Buffer
			got.WriteString("Content-Type: " + resp.Header.Get("Content-Type") + "\n")
			if e := resp.Header.Get("ETag"); e != "" {
				got.WriteString("ETag: " + e + "\n")
			}
			got.WriteString("\n")
			got.Write(pretty)
			got.WriteString("\n")
			compareGolden(t, filepath.Join("testdata", tc.name+".golden"), got.Bytes())

			// The compact form is the same document on one line, with
			// the trailing newline of kube's JSON encoder.
			compact := body(t, do(t, h, http.MethodGet, tc.path, tc.accept))
			var want bytes.Buffer
			if err := json.Compact(&want, pretty); err != nil {
				t.Fatal(err)
			}
			want.WriteString("\n")
			if !bytes.Equal(compact, want.Bytes()) {
				t.Errorf("compact body:\ngot  %s\nwant %s", compact, want.Bytes())
			}
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update if the change is intended):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first differing line.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + itoa(i+1) + ":\n got  " + gl + "\n want " + wl
		}
	}
	return "(no line differs)"
}
