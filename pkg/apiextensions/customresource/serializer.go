package customresource

import (
	"context"
	"io"
	"strings"
	"sync/atomic"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
)

// Serializer is the runtime.NegotiatedSerializer of custom resources:
// JSON, YAML and protobuf, as upstream's unstructuredNegotiatedSerializer
// (apiextensions-apiserver v0.37.2 customresource_handler.go). Custom
// resources themselves are only JSON and YAML (ServesObjectsAs, upstream's
// StandardSerializers): protobuf carries what the server makes of them
// (PartialObjectMetadata and its list, in gets, lists and watches) and its
// errors (a Status), so a protobuf Accept for the objects themselves is a
// 406 naming all three types, written in protobuf, as kube-apiserver's.
// Decoding leaves objects as sent (the handler checks their
// group-version); encoding rewrites the apiVersion of unstructured objects
// and list items to the target version (conversion strategy None), and
// encodes the few typed objects that pass through (Status, WatchEvent,
// APIResourceList, DeleteOptions) with their registered kinds.
type Serializer struct {
	infos []runtime.SerializerInfo
}

// ServesObjectsAs reports whether custom resources themselves are written
// and read in mediaType: JSON and YAML (see Serializer).
func (Serializer) ServesObjectsAs(mediaType string) bool {
	return mediaType == runtime.ContentTypeJSON || mediaType == runtime.ContentTypeYAML
}

// DecodesBodiesFrom reports whether request bodies are read in mediaType:
// JSON and YAML.
func (s Serializer) DecodesBodiesFrom(mediaType string) bool { return s.ServesObjectsAs(mediaType) }

// ScaleSerializer is the serializer of the scale subresource of custom
// resources: ns (the built-in types' codecs), whose Scale objects are
// read in every media type, protobuf included, but written in JSON and
// YAML only (upstream's scale scope keeps the custom resources'
// StandardSerializers), while protobuf carries PartialObjectMetadata and
// errors. kube-apiserver v1.37.2 answers a protobuf Accept on
// .../scale with 406.
type ScaleSerializer struct{ runtime.NegotiatedSerializer }

// ServesObjectsAs reports whether a Scale is written in mediaType.
func (ScaleSerializer) ServesObjectsAs(mediaType string) bool {
	return Serializer{}.ServesObjectsAs(mediaType)
}

var _ runtime.NegotiatedSerializer = Serializer{}

// NewSerializer returns the serializer; one is shared by every custom
// resource.
func NewSerializer() Serializer {
	var c runtime.ObjectCreater = Creater{}
	t := scheme.Scheme
	newJSON := func(o json.SerializerOptions) *json.Serializer {
		return json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, o)
	}
	return Serializer{infos: []runtime.SerializerInfo{
		{
			MediaType:        runtime.ContentTypeJSON,
			MediaTypeType:    "application",
			MediaTypeSubType: "json",
			EncodesAsText:    true,
			Serializer:       newJSON(json.SerializerOptions{}),
			PrettySerializer: newJSON(json.SerializerOptions{Pretty: true}),
			StrictSerializer: newJSON(json.SerializerOptions{Strict: true}),
			StreamSerializer: &runtime.StreamSerializerInfo{
				EncodesAsText: true,
				Serializer:    newJSON(json.SerializerOptions{}),
				Framer:        json.Framer,
			},
		},
		{
			MediaType:        runtime.ContentTypeYAML,
			MediaTypeType:    "application",
			MediaTypeSubType: "yaml",
			EncodesAsText:    true,
			Serializer:       newJSON(json.SerializerOptions{Yaml: true}),
			StrictSerializer: newJSON(json.SerializerOptions{Yaml: true, Strict: true}),
		},
		{
			MediaType:        runtime.ContentTypeProtobuf,
			MediaTypeType:    "application",
			MediaTypeSubType: "vnd.kubernetes.protobuf",
			Serializer:       protobuf.NewSerializer(c, t),
			StreamSerializer: &runtime.StreamSerializerInfo{
				Serializer: protobuf.NewRawSerializer(c, t),
				Framer:     protobuf.LengthDelimitedFramer,
			},
		},
	}}
}

func (s Serializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.infos }

func (s Serializer) EncoderForVersion(enc runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return encoder{enc: enc, target: gv, plainJSON: len(s.infos) > 0 && enc == s.infos[0].Serializer}
}

func (s Serializer) DecoderToVersion(dec runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	if len(s.infos) > 0 {
		switch dec {
		case s.infos[0].Serializer:
			return bodyDecoder{std: dec}
		case s.infos[0].StrictSerializer:
			return bodyDecoder{std: dec, strict: true}
		}
	}
	return dec
}

// sniffable tells whether json.DefaultMetaFactory.Interpret reads the
// document m was decoded from without an error, when its top level has
// no key twice (m holds every value): it decodes it with encoding/json
// into a struct of two strings, apiVersion and kind, whose keys match
// case-insensitively (foldName: the classes of strings.EqualFold), so it
// fails when such a key holds anything but a string or null. (It cannot
// fail otherwise on a document decodeJSONObject read: one valid object,
// nested at most 1000 deep.)
func sniffable(m map[string]any) bool {
	for k, v := range m {
		if strings.EqualFold(k, "kind") || strings.EqualFold(k, "apiVersion") {
			switch v.(type) {
			case string, nil:
			default:
				return false
			}
		}
	}
	return true
}

// bodyDecoder is the JSON serializer std (strict or not) for request
// bodies and patched objects: what it decodes into an Unstructured is
// read by decodeJSONBody instead of sigs.k8s.io/json, with the same
// result. std's (json.Serializer.Decode) for an Unstructured target is
// the kind sniffed by its MetaFactory (only its errors count: see
// sniffable), the object decoded as util/json.Unmarshal (strict:
// UnmarshalStrict into a map, whose only strict error is a duplicate
// key), then the kind the object holds, an error when it has none.
// Anything else goes to std: other targets, documents decodeJSONBody
// hands over, a duplicate key (strict: anywhere; else at the top level,
// where the sniff must see every value), a sniff that would fail, an
// object without a kind; so every error and warning is std's own.
type bodyDecoder struct {
	std    runtime.Decoder
	strict bool
}

func (d bodyDecoder) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	u, ok := into.(*unstructured.Unstructured)
	if !ok || u == nil {
		return d.std.Decode(data, gvk, into)
	}
	m, topDup, ok := decodeJSONBody(data, d.strict)
	if !ok || topDup || !sniffable(m) {
		return d.std.Decode(data, gvk, into)
	}
	actual := (&unstructured.Unstructured{Object: m}).GroupVersionKind()
	if actual.Kind == "" {
		return d.std.Decode(data, gvk, into)
	}
	u.Object = m
	return u, &actual, nil
}

// Creater creates the registered kinds from the shared scheme, and an
// Unstructured object of any other kind.
type Creater struct{}

func (Creater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if obj, err := scheme.Scheme.New(gvk); err == nil {
		return obj, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// encoder encodes for a target version.
type encoder struct {
	enc    runtime.Encoder
	target runtime.GroupVersioner
	// plainJSON: enc is the compact JSON serializer (not YAML, not pretty).
	plainJSON bool
}

var (
	_ handlers.ListItemEncoder         = encoder{}
	_ handlers.ObjectPreservingEncoder = encoder{}
)

// PreservesObjects implements handlers.ObjectPreservingEncoder: Encode
// never changes its object (unstructured objects and lists are shallow
// copies when their apiVersion is rewritten, typed objects deep copies, and
// the JSON and YAML serializers only read).
func (encoder) PreservesObjects() {}

// EncodeListItem implements handlers.ListItemEncoder for compact JSON: a
// custom resource inside a list is written as the list's encoding writes
// it (the unstructured JSON scheme's encoding of the object with the
// target apiVersion, as Encode of an UnstructuredList does for each item),
// without the trailing newline a single object's encoding ends with, and
// without encoding/json compacting that output again as it does for
// json.Marshaler values. The item is not changed (withAPIVersion copies).
func (e encoder) EncodeListItem(item runtime.Object, w io.Writer) (bool, error) {
	u, ok := item.(*unstructured.Unstructured)
	if !ok || !e.plainJSON {
		return false, nil
	}
	return true, writeUnstructuredJSON(w, withAPIVersion(u, e.target).Object, false)
}

func (e encoder) Identifier() runtime.Identifier {
	return runtime.Identifier("apiextensions-cr:" + string(e.enc.Identifier()))
}

func (e encoder) Encode(obj runtime.Object, w io.Writer) error {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if e.plainJSON {
			// What the JSON serializer writes for it: encoding/json calls
			// the object's MarshalJSON (this same encoding, ending with a
			// newline) and compacts its output, which changes nothing in
			// it (the JSON is already compact, with HTML characters
			// escaped as encoding/json's own output has them), then adds
			// the newline it removed. Written directly (writeUnstructuredJSON:
			// the same bytes), without the copy and re-scan of the
			// compaction.
			return writeUnstructuredJSON(w, withAPIVersion(o, e.target).Object, true)
		}
		return e.enc.Encode(withAPIVersion(o, e.target), w)
	case *unstructured.UnstructuredList:
		out := &unstructured.UnstructuredList{Object: shallowCopy(o.Object), Items: make([]unstructured.Unstructured, len(o.Items))}
		if gv, ok := targetGV(o.GroupVersionKind(), e.target); ok {
			out.SetAPIVersion(gv.String())
		}
		for i := range o.Items {
			out.Items[i] = *withAPIVersion(&o.Items[i], e.target)
		}
		return e.enc.Encode(out, w)
	case runtime.Unstructured:
		return e.enc.Encode(obj, w)
	}
	kinds, unversioned, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return e.enc.Encode(obj, w)
	}
	var gvk schema.GroupVersionKind
	switch {
	case unversioned:
		gvk = kinds[0]
	default:
		k, ok := e.target.KindForGroupVersionKinds(kinds)
		if !ok {
			// e.g. a WatchEvent, which carries no type meta.
			return e.enc.Encode(obj, w)
		}
		gvk = k
	}
	// Shared objects (the discovery list) must not be mutated.
	cp := obj.DeepCopyObject()
	cp.GetObjectKind().SetGroupVersionKind(gvk)
	return e.enc.Encode(cp, w)
}

// withAPIVersion returns u, or a shallow copy with the target's apiVersion.
func withAPIVersion(u *unstructured.Unstructured, target runtime.GroupVersioner) *unstructured.Unstructured {
	gv, ok := targetGV(u.GroupVersionKind(), target)
	if !ok || u.GetAPIVersion() == gv.String() {
		return u
	}
	out := &unstructured.Unstructured{Object: shallowCopy(u.Object)}
	out.SetAPIVersion(gv.String())
	return out
}

func targetGV(gvk schema.GroupVersionKind, target runtime.GroupVersioner) (schema.GroupVersion, bool) {
	if target == nil || gvk.Kind == "" {
		return schema.GroupVersion{}, false
	}
	k, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk})
	if !ok || k.Version == "" {
		return schema.GroupVersion{}, false
	}
	return k.GroupVersion(), true
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// StorageCodec stores custom resources as JSON in the storage version and
// reads them as the served version, converting with the CRD's converter
// (strategy None: only apiVersion changes; Webhook: a ConversionReview per
// object read or written in another version).
type StorageCodec struct {
	// Storage is the version objects are stored in, Served the version
	// they are read as.
	Storage, Served schema.GroupVersion
	// Schemas are the structural schemas of the CRD's versions, by name
	// (nil: none). As upstream's storage codec (apiextensions-apiserver
	// v0.37 pkg/apiserver/customresource_handler.go: schemaCoercingDecoder,
	// then schemaCoercingConverter, then unstructuredDefaulter), an object
	// read from storage is pruned against the schema of the version it
	// was stored in, converted, pruned against the served version's
	// schema, and defaulted from it: a field a later schema no longer
	// declares is gone from reads of objects stored before, a default
	// added later shows, and non-nullable nulls without a default are
	// dropped. The storage is rebuilt when they change (the watch cache
	// keeps what it decoded).
	Schemas map[string]*apiextensionsv1.JSONSchemaProps
	// Converter, when set, holds the CRD's current converter (it follows
	// CRD updates while the storage is kept); nil means strategy None.
	Converter *atomic.Pointer[ConverterHolder]
}

// ConverterHolder lets an atomic.Pointer hold a converter (an interface).
type ConverterHolder struct{ conversion.Converter }

func (c StorageCodec) convert(u *unstructured.Unstructured, to schema.GroupVersion) (*unstructured.Unstructured, error) {
	if c.Converter != nil {
		if h := c.Converter.Load(); h != nil && h.Converter != nil {
			// Codecs take no context: the converter's own timeout (30s,
			// as upstream) bounds a webhook call.
			return h.ConvertObject(context.Background(), u, to)
		}
	}
	return withAPIVersion(u, to), nil
}

var _ runtime.Codec = StorageCodec{}

func (c StorageCodec) Identifier() runtime.Identifier {
	return runtime.Identifier("apiextensions-storage:" + c.Storage.String() + ">" + c.Served.String())
}

func (c StorageCodec) Encode(obj runtime.Object, w io.Writer) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		converted, err := c.convert(u, c.Storage)
		if err != nil {
			return err
		}
		// What unstructured.UnstructuredJSONScheme writes for it.
		return writeUnstructuredJSON(w, converted.Object, true)
	}
	return unstructured.UnstructuredJSONScheme.Encode(obj, w)
}

func (c StorageCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if u, ok := into.(*unstructured.Unstructured); ok {
		// Every read of one object (a get, a write's answer, a watch
		// event): the same object as UnstructuredJSONScheme's decode
		// below, read without its reflection and second pass
		// (decodeJSONObject); anything it does not read goes there.
		if m, ok := decodeJSONObject(data); ok {
			u.Object = m
			gvk := u.GroupVersionKind()
			if gvk.Kind == "" {
				return nil, &gvk, runtime.NewMissingKindErr(string(data))
			}
			if err := c.read(u); err != nil {
				return nil, &gvk, err
			}
			return u, &gvk, nil
		}
	}
	obj, gvk, err := unstructured.UnstructuredJSONScheme.Decode(data, defaults, into)
	if err != nil {
		return nil, gvk, err
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if err := c.read(o); err != nil {
			return nil, gvk, err
		}
	case *unstructured.UnstructuredList:
		for i := range o.Items {
			if err := c.read(&o.Items[i]); err != nil {
				return nil, gvk, err
			}
		}
	}
	return obj, gvk, nil
}

// read turns u, as stored, into what a read returns: pruned against the
// schema of the version it was stored in, converted to the served
// version, pruned against its schema and defaulted. When both versions
// are the same the object is pruned once: pruning is idempotent.
func (c StorageCodec) read(u *unstructured.Unstructured) error {
	if gv, err := schema.ParseGroupVersion(u.GetAPIVersion()); err == nil && gv != c.Served {
		// An object stored in a version the CRD no longer has (only
		// after status.storedVersions was edited: validation keeps a
		// stored version in the CRD) has no schema here and is not
		// pruned. Deliberately unlike upstream, which prunes it against
		// an empty schema, leaving apiVersion, kind and metadata only.
		coerce(u.Object, c.Schemas[gv.Version])
	}
	converted, err := c.convert(u, c.Served)
	if err != nil {
		return err
	}
	u.Object = converted.Object
	served := c.Schemas[c.Served.Version]
	coerce(u.Object, served)
	structuralschema.ApplyDefaults(u.Object, served)
	return nil
}

// coerce prunes obj against s, as upstream's unstructuredSchemaCoercer:
// unknown fields and non-nullable nulls without a default (see
// structuralschema.Prune). A nil s (a version without a schema) changes
// nothing.
func coerce(obj map[string]any, s *apiextensionsv1.JSONSchemaProps) {
	structuralschema.Prune(obj, s)
}
