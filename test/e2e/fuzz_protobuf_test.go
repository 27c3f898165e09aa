package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// fuzzNamespace holds the objects the protobuf fuzz target writes to (all
// of its writes are dry runs but the seeds it updates).
const fuzzNamespace = "fuzz-protobuf"

// protobufKind is one kind the server serves with create or update.
type protobufKind struct {
	gvk        schema.GroupVersionKind
	resource   string
	namespaced bool
	create     bool
	update     bool
}

// path is the collection path of k, in fuzzNamespace when namespaced.
func (k protobufKind) path() string {
	p := "/apis/" + k.gvk.Group + "/" + k.gvk.Version
	if k.gvk.Group == "" {
		p = "/api/" + k.gvk.Version
	}
	if k.namespaced {
		p += "/namespaces/" + fuzzNamespace
	}
	return p + "/" + k.resource
}

// protobufFuzz is what every input of FuzzProtobufBodies uses: the kinds
// the memory backend serves and a client for it.
type protobufFuzz struct {
	kinds  []protobufKind
	client *http.Client
	host   string
}

var (
	protobufFuzzOnce sync.Once
	protobufFuzzEnv  *protobufFuzz
	protobufFuzzErr  error
)

// protobufScheme encodes every kind the server may serve: k8s.io/api's,
// CustomResourceDefinition and APIService.
var protobufScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(apiregistrationv1.AddToScheme(s))
	return s
}()

func startProtobufFuzz() (*protobufFuzz, error) {
	protobufFuzzOnce.Do(func() {
		protobufFuzzEnv, protobufFuzzErr = newProtobufFuzz()
	})
	return protobufFuzzEnv, protobufFuzzErr
}

func newProtobufFuzz() (*protobufFuzz, error) {
	srv, err := memoryBackend.start()
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(srv.Config)
	cfg.QPS = -1
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		return nil, err
	}
	var kinds []protobufKind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			k := protobufKind{
				gvk: gv.WithKind(r.Kind), resource: r.Name, namespaced: r.Namespaced,
				create: slices.Contains(r.Verbs, "create"), update: slices.Contains(r.Verbs, "update"),
			}
			if strings.Contains(r.Name, "/") || !k.create && !k.update || !protobufScheme.Recognizes(k.gvk) {
				continue
			}
			kinds = append(kinds, k)
		}
	}
	slices.SortFunc(kinds, func(a, b protobufKind) int {
		return strings.Compare(a.gvk.String()+a.resource, b.gvk.String()+b.resource)
	})
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	f := &protobufFuzz{kinds: kinds, client: client, host: cfg.Host}
	// The namespace and one stored object per updatable kind, named
	// "fuzz", so that PUTs reach the update path.
	ctx := context.Background()
	if err := f.ensure(ctx, "/api/v1/namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fuzzNamespace}}); err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if !k.update || !k.create {
			continue
		}
		obj := protobufSeed(k)
		if err := f.ensure(ctx, k.path(), obj); err != nil && !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
			return nil, fmt.Errorf("seed %s: %w", k.gvk, err)
		}
	}
	return f, nil
}

// ensure creates obj (encoded as protobuf) at path unless it exists.
func (f *protobufFuzz) ensure(ctx context.Context, path string, obj runtime.Object) error {
	body, err := encodeProtobuf(obj)
	if err != nil {
		return err
	}
	code, st, err := f.send(ctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	if code == http.StatusCreated || code == http.StatusConflict && st.Reason == metav1.StatusReasonAlreadyExists {
		return nil
	}
	return &apierrors.StatusError{ErrStatus: st}
}

// send sends body as protobuf and returns the code and, for failures, the
// Status (which must be one).
func (f *protobufFuzz) send(ctx context.Context, method, path string, body []byte) (int, metav1.Status, error) {
	req, err := http.NewRequestWithContext(ctx, method, f.host+path, bytes.NewReader(body))
	if err != nil {
		return 0, metav1.Status{}, err
	}
	req.Header.Set("Content-Type", "application/vnd.kubernetes.protobuf")
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, metav1.Status{}, fmt.Errorf("no response: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, metav1.Status{}, fmt.Errorf("response cut short: %w", err)
	}
	var st metav1.Status
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(data, &st); err != nil || st.Kind != "Status" || int(st.Code) != resp.StatusCode {
			return resp.StatusCode, st, fmt.Errorf("a %d that is not its Status: %.300s", resp.StatusCode, data)
		}
	}
	return resp.StatusCode, st, nil
}

// protobufSeed is an object of k named "fuzz": the kind's empty object,
// with a little content for the kinds whose content matters most.
func protobufSeed(k protobufKind) runtime.Object {
	obj, err := protobufScheme.New(k.gvk)
	if err != nil {
		panic(err)
	}
	switch o := obj.(type) {
	case *corev1.Service:
		o.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("web")}}
		o.Spec.Selector = map[string]string{"app": "fuzz"}
	case *corev1.ConfigMap:
		o.Data = map[string]string{"k": "v"}
	case *corev1.Secret:
		o.Data = map[string][]byte{"k": []byte("v")}
	}
	m, err := meta.Accessor(obj)
	if err == nil {
		m.SetName("fuzz")
		m.SetLabels(map[string]string{"fuzz": "protobuf"})
	}
	return obj
}

func encodeProtobuf(obj runtime.Object) ([]byte, error) {
	gvks, _, err := protobufScheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	ps := protobuf.NewSerializer(protobufScheme, protobufScheme)
	enc := serializer.NewCodecFactory(protobufScheme).EncoderForVersion(ps, gvks[0].GroupVersion())
	return runtime.Encode(enc, obj)
}

// FuzzProtobufBodies sends protobuf bodies of every kind the server serves
// to its create (POST) and update (PUT) endpoints, as dry runs. Whatever
// the bytes, the server answers, never with a 5xx (but upstream's one 500
// for a create that carries a resourceVersion), and every failure is a
// Status. The seeds (one valid object per kind, then hostile ones) run in
// every `go test`; `go test -fuzz=FuzzProtobufBodies` explores further.
func FuzzProtobufBodies(f *testing.F) {
	env, err := startProtobufFuzz()
	if err != nil {
		f.Fatalf("start: %v", err)
	}
	serviceIndex := -1
	for i, k := range env.kinds {
		body, err := encodeProtobuf(protobufSeed(k))
		if err != nil {
			f.Fatalf("encode %s: %v", k.gvk, err)
		}
		f.Add(uint8(i), false, body)
		f.Add(uint8(i), true, body)
		f.Add(uint8(i), false, body[:len(body)/2])
		if k.gvk == corev1.SchemeGroupVersion.WithKind("Service") {
			serviceIndex = i
		}
	}
	if serviceIndex < 0 {
		f.Fatal("the server serves no v1 Service")
	}
	// The known crash: an IntOrString whose type is neither int nor
	// string, which only protobuf can carry.
	for _, typ := range []intstr.Type{2, 7, -1} {
		svc := protobufSeed(env.kinds[serviceIndex]).(*corev1.Service)
		svc.Spec.Ports[0].TargetPort = intstr.IntOrString{Type: typ, IntVal: 8080}
		body, err := encodeProtobuf(svc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(serviceIndex), false, body)
		f.Add(uint8(serviceIndex), true, body)
	}
	// A CustomResourceDefinition whose schema nests deeper than the
	// JSON decoder would accept.
	for i, k := range env.kinds {
		if k.gvk == apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
			f.Add(uint8(i), false, deepCRDProtobuf(6000))
		}
	}
	f.Add(uint8(0), false, []byte("k8s\x00"))
	f.Add(uint8(1), true, []byte("k8s\x00\x0a\x04\x0a\x00\x12\x00\x12\x08\x0a\x06\x0a\x04fuzz"))

	f.Fuzz(func(t *testing.T, kind uint8, put bool, body []byte) {
		k := env.kinds[int(kind)%len(env.kinds)]
		method, path := http.MethodPost, k.path()
		if put && k.update || !k.create {
			method, path = http.MethodPut, path+"/fuzz"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		code, st, err := env.send(ctx, method, path+"?dryRun=All", body)
		if err != nil {
			t.Fatalf("%s %s (%d bytes): %v", method, path, len(body), err)
		}
		if code >= 500 && !strings.Contains(st.Message, "resourceVersion should not be set on objects to be created") {
			t.Fatalf("%s %s (%d bytes): %d %s: %s", method, path, len(body), code, st.Reason, st.Message)
		}
	})
}

// protoField is one length-delimited protobuf field.
func protoField(num int, payload []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(num<<3|2))
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// deepCRDProtobuf is a CustomResourceDefinition in protobuf whose schema
// nests depth levels of properties, built from the inside out (encoding
// such an object with its Go types would recurse as deep).
func deepCRDProtobuf(depth int) []byte {
	var schema []byte
	for range depth {
		// JSONSchemaProps.properties (29): an entry "a" -> schema.
		entry := append([]byte{0x0a, 0x01, 'a'}, protoField(2, schema)...)
		schema = protoField(29, entry)
	}
	must := func(b []byte, err error) []byte {
		if err != nil {
			panic(err)
		}
		return b
	}
	version := must((&apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Served: true, Storage: true}).Marshal())
	version = append(version, protoField(4, protoField(1, schema))...) // schema.openAPIV3Schema
	spec := must((&apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "deep.example.com", Scope: "Namespaced",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Kind: "Thing"},
	}).Marshal())
	spec = append(spec, protoField(7, version)...) // versions
	crd := must((&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "things.deep.example.com"}}).Marshal())
	crd = append(crd, protoField(2, spec)...) // spec
	unknown := must((&runtime.Unknown{
		TypeMeta: runtime.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		Raw:      crd,
	}).Marshal())
	return append([]byte("k8s\x00"), unknown...)
}

// Hostile protobuf through real clients: client-go sends an IntOrString of
// an impossible type, and a CustomResourceDefinition nested deeper than
// JSON allows; both are 400s that say what is wrong, and the server goes
// on serving.
func TestHostileProtobufIsBadRequest(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.newNamespace(t)
		cfg := e.config()
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cs := mustClientset(t, cfg)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hostile"}, Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.IntOrString{Type: 7, IntVal: 8080}}},
		}}
		_, err := cs.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `Service in version "v1" cannot be handled as a Service: spec.ports[0].targetPort: Invalid value: 7`) {
			t.Errorf("service: got %v, want a 400 naming spec.ports[0].targetPort", err)
		}
		r := e.raw(t, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All", deepCRDProtobuf(6000),
			"Content-Type", "application/vnd.kubernetes.protobuf")
		if r.code != http.StatusBadRequest || !strings.Contains(decodeStatus(t, r.body).Message, "exceeded max depth of 10000") {
			t.Errorf("deep CRD: got %d %.300s, want 400 exceeded max depth of 10000", r.code, r.body)
		}
		if _, err := cs.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Errorf("after: %v", err)
		}
	})
}
