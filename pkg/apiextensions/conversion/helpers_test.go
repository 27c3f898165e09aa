package conversion

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/testx509"
)

const group = "stable.example.com"

var (
	gvV1 = schema.GroupVersion{Group: group, Version: "v1"}
	gvV2 = schema.GroupVersion{Group: group, Version: "v2"}
)

var caSerial atomic.Int64

// newTestCA makes an ECDSA certificate authority for one test, named
// apart from every other test's.
func newTestCA(t *testing.T) *testx509.CA {
	t.Helper()
	return testx509.NewCA(t, fmt.Sprintf("conversion-test-ca-%d", caSerial.Add(1)), testx509.ECDSA)
}

// hookServer is a real HTTPS conversion webhook.
type hookServer struct {
	*httptest.Server
	calls atomic.Int32
	conns atomic.Int32

	mu       sync.Mutex
	requests []recordedRequest
}

type recordedRequest struct {
	proto  int
	host   string
	path   string
	query  url.Values
	review map[string]any
}

// newHookServer starts an HTTPS server with a certificate of ca for
// 127.0.0.1, localhost and dnsNames, answering with handle.
func newHookServer(t *testing.T, ca *testx509.CA, dnsNames []string, ips []net.IP, handle func(w http.ResponseWriter, r *http.Request, review map[string]any)) *hookServer {
	t.Helper()
	h := &hookServer{}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.calls.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var review map[string]any
		if err := json.Unmarshal(body, &review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.requests = append(h.requests, recordedRequest{proto: r.ProtoMajor, host: r.Host, path: r.URL.Path, query: r.URL.Query(), review: review})
		h.mu.Unlock()
		handle(w, r, review)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			h.conns.Add(1)
		}
	}
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{*ca.Leaf(t, "webhook", 0, testx509.Names{DNS: dnsNames, IPs: ips})}}
	s.EnableHTTP2 = true
	s.StartTLS()
	h.Server = s
	t.Cleanup(s.Close)
	return h
}

func (h *hookServer) lastRequest(t *testing.T) recordedRequest {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.requests) == 0 {
		t.Fatal("webhook got no request")
	}
	return h.requests[len(h.requests)-1]
}

// reviewRequest returns the request part of a review sent to the webhook.
func reviewRequest(review map[string]any) (uid, desired string, objs []map[string]any) {
	req, _ := review["request"].(map[string]any)
	uid, _ = req["uid"].(string)
	desired, _ = req["desiredAPIVersion"].(string)
	items, _ := req["objects"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		objs = append(objs, m)
	}
	return uid, desired, objs
}

// respond writes a ConversionReview answer of the same apiVersion as the
// request.
func respond(w http.ResponseWriter, review map[string]any, uid string, result metav1.Status, converted []map[string]any) {
	objs := make([]any, len(converted))
	for i, c := range converted {
		objs[i] = c
	}
	resp := map[string]any{
		"apiVersion": review["apiVersion"],
		"kind":       "ConversionReview",
		"response": map[string]any{
			"uid":              uid,
			"result":           result,
			"convertedObjects": objs,
		},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// convertAll is a correct webhook: v1 spec.host <-> v2 spec.hostname,
// apiVersion set; mutate, if set, changes each converted object last.
func convertAll(mutate func(i int, obj map[string]any)) func(w http.ResponseWriter, r *http.Request, review map[string]any) {
	return func(w http.ResponseWriter, _ *http.Request, review map[string]any) {
		uid, desired, objs := reviewRequest(review)
		out := make([]map[string]any, len(objs))
		for i, o := range objs {
			c := (&unstructured.Unstructured{Object: o}).DeepCopy().Object
			spec, _ := c["spec"].(map[string]any)
			switch desired {
			case gvV2.String():
				if v, ok := spec["host"]; ok {
					spec["hostname"] = v
					delete(spec, "host")
				}
			case gvV1.String():
				if v, ok := spec["hostname"]; ok {
					spec["host"] = v
					delete(spec, "hostname")
				}
			}
			c["apiVersion"] = desired
			if mutate != nil {
				mutate(i, c)
			}
			out[i] = c
		}
		respond(w, review, uid, metav1.Status{Status: metav1.StatusSuccess}, out)
	}
}

// webhookCRD returns a CRD of versions v1 and v2 (v1 stored) whose
// conversion webhook is cc.
func webhookCRD(cc apiextensionsv1.WebhookClientConfig, reviewVersions ...string) *apiextensionsv1.CustomResourceDefinition {
	if len(reviewVersions) == 0 {
		reviewVersions = []string{"v1"}
	}
	crd := noneCRD()
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook:  &apiextensionsv1.WebhookConversion{ClientConfig: &cc, ConversionReviewVersions: reviewVersions},
	}
	return crd
}

func noneCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "crontabs." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "crontabs", Singular: "crontab", Kind: "CronTab", ListKind: "CronTabList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true},
				{Name: "v2", Served: true},
			},
		},
	}
}

// urlConfig is the client config of a webhook at s's /convert, trusted
// through ca.
func urlConfig(s *hookServer, ca *testx509.CA) apiextensionsv1.WebhookClientConfig {
	return apiextensionsv1.WebhookClientConfig{URL: ptr.To(s.URL + "/convert"), CABundle: ca.PEM}
}

// cronTab returns a CronTab of version gv.
func cronTab(gv schema.GroupVersion, name string) *unstructured.Unstructured {
	field := "host"
	if gv == gvV2 {
		field = "hostname"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(),
		"kind":       "CronTab",
		"metadata": map[string]any{
			"name":            name,
			"namespace":       "default",
			"uid":             "uid-" + name,
			"resourceVersion": "7",
			"labels":          map[string]any{"app": "a"},
		},
		"spec": map[string]any{field: "example.com", "replicas": int64(3)},
	}}
}

func ptrString(s string) *string { return &s }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func equalObjects(a, b *unstructured.Unstructured) bool {
	return equality.Semantic.DeepEqual(a.Object, b.Object)
}

// staticResolver resolves every service to addr (or fails with err).
type staticResolver struct {
	addr string
	err  error
	mu   *sync.Mutex
	seen *[]string
}

func (r staticResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	if r.mu != nil {
		r.mu.Lock()
		*r.seen = append(*r.seen, namespace+"/"+name+":"+strconv.Itoa(int(port)))
		r.mu.Unlock()
	}
	if r.err != nil {
		return nil, r.err
	}
	return &url.URL{Scheme: "https", Host: r.addr}, nil
}
