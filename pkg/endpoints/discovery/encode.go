package discovery

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// gzipThreshold is kube's: bodies larger than this are gzipped for clients
// that accept it.
const gzipThreshold = 128 * 1024

// codecs holds the serializers. They encode an object as it is, with the
// TypeMeta the builder set (kube strips apiVersion from /api's APIVersions,
// keeps "v1" on APIGroupList and APIGroup); nothing here mutates objects, so
// documents may be encoded concurrently.
type codecs struct {
	encoders [numEncodings]runtime.Encoder
}

func newCodecs() (*codecs, error) {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	if err := apidiscoveryv2.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register apidiscovery.k8s.io/v2: %w", err)
	}
	if err := apidiscoveryv2beta1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register apidiscovery.k8s.io/v2beta1: %w", err)
	}
	c := &codecs{}
	c.encoders[encJSON] = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{})
	c.encoders[encJSONPretty] = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Pretty: true})
	c.encoders[encYAML] = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true})
	c.encoders[encProtobuf] = protobuf.NewSerializer(scheme, scheme)
	return c, nil
}

// document is one discovery response object with its encodings, each
// computed at most once, on first use.
type document struct {
	codecs *codecs
	obj    runtime.Object

	once [numEncodings]sync.Once
	body [numEncodings][]byte
	err  [numEncodings]error

	gzOnce [numEncodings]sync.Once
	gz     [numEncodings][]byte
	gzErr  [numEncodings]error
}

func newDocument(c *codecs, obj runtime.Object) *document {
	return &document{codecs: c, obj: obj}
}

// bytes returns the document in encoding e.
func (d *document) bytes(e encoding) ([]byte, error) {
	d.once[e].Do(func() {
		var buf bytes.Buffer
		if err := d.codecs.encoders[e].Encode(d.obj, &buf); err != nil {
			d.err[e] = fmt.Errorf("encode %T: %w", d.obj, err)
			return
		}
		d.body[e] = buf.Bytes()
	})
	return d.body[e], d.err[e]
}

// gzipped returns the document in encoding e, gzipped.
func (d *document) gzipped(e encoding) ([]byte, error) {
	d.gzOnce[e].Do(func() {
		body, err := d.bytes(e)
		if err != nil {
			d.gzErr[e] = err
			return
		}
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		if err != nil {
			d.gzErr[e] = fmt.Errorf("gzip: %w", err)
			return
		}
		if _, err := zw.Write(body); err != nil {
			d.gzErr[e] = fmt.Errorf("gzip: %w", err)
			return
		}
		if err := zw.Close(); err != nil {
			d.gzErr[e] = fmt.Errorf("gzip: %w", err)
			return
		}
		d.gz[e] = buf.Bytes()
	})
	return d.gz[e], d.gzErr[e]
}
