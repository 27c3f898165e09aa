// Package bootimage holds bootstrap images: what a server's post-start
// hooks write into an empty storage before it is ready (the RBAC bootstrap
// policy, the priority-and-fairness configuration, the local APIServices,
// the system PriorityClasses and Namespaces), kept so that a later server
// on an empty memory storage can start with those objects already stored,
// each with the new server's own identity (a new uid, creationTimestamp,
// managed-fields and condition times of now, the store's own
// resourceVersions). The server then runs the same hooks, which find every
// object present and current and write nothing: what kube-apiserver does
// when restarted on its existing etcd data. The hooks' creates through the
// handler chain (their audit events, admission and metrics) do not happen
// in such a server.
//
// Objects that hold something of the server (its CA bundle ConfigMaps,
// the kubernetes Service and its endpoints with the server's port and
// address, the cluster IP allocation, leases with holders, ServiceAccounts
// made by its controllers) are never in an image: the server makes them as
// on any start.
//
// Images are made at run time (kapitest keeps one per process and option
// set) or at build time: Default is the image of kapi's default options,
// embedded in the binary (default.img, written by
// `go test ./kapitest -run TestDefaultBootstrapImageCurrent -update-bootstrap-image`
// from a cold start of the server itself; that test fails when the file no
// longer matches what the hooks write).
package bootimage

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	// APIServices are among the objects: their kinds join the scheme.
	_ "github.com/kapi-dev/kapi/pkg/aggregator/apiservice"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// Image is a bootstrap image. Its objects are never written once it is
// built (Instantiate works on deep copies).
type Image struct {
	// objs maps a memory-storage key to its object as decoded from
	// storage.
	objs map[string]runtime.Object
}

// prefixes are the memory-backend key prefixes whose objects an image
// holds.
var prefixes = []string{
	"/rbac.authorization.k8s.io/",
	"/flowcontrol.apiserver.k8s.io/",
	"/apiregistration.k8s.io/apiservices/",
	"/scheduling.k8s.io/priorityclasses/",
	"/namespaces/",
}

// Holds reports whether the object at a memory-storage key belongs in an
// image.
func Holds(key string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// Objects are img's objects by storage key: the caller must not write
// them.
func (img *Image) Objects() map[string]runtime.Object { return img.objs }

// Len is the number of objects in img.
func (img *Image) Len() int { return len(img.objs) }

var (
	decoder    = scheme.Codecs.UniversalDeserializer()
	serializer = func() runtime.Serializer {
		info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
		if !ok {
			panic("bootimage: no protobuf serializer")
		}
		return info.Serializer
	}()
)

// New keeps the image objects of state (a memory backend's content once
// its server's hooks are done), decoded. Every object must encode back to
// the bytes it was read from, as Instantiate encodes them: otherwise there
// is no image.
func New(state map[string][]byte) (*Image, error) {
	img := &Image{objs: map[string]runtime.Object{}}
	for k, v := range state {
		if !Holds(k) {
			continue
		}
		obj, err := Decode(k, v)
		if err != nil {
			return nil, err
		}
		data, err := encode(k, obj)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(data, v) {
			return nil, fmt.Errorf("bootstrap image: %s does not encode back to its stored bytes", k)
		}
		img.objs[k] = obj
	}
	return img, nil
}

// Decode decodes an object as stored at key.
func Decode(key string, data []byte) (runtime.Object, error) {
	obj, _, err := decoder.Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("bootstrap image: decode %s: %w", key, err)
	}
	return obj, nil
}

func encode(key string, obj runtime.Object) ([]byte, error) {
	gv := obj.GetObjectKind().GroupVersionKind().GroupVersion()
	var buf bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(serializer, gv).Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("bootstrap image: encode %s: %w", key, err)
	}
	return buf.Bytes(), nil
}

// Instantiate returns img's objects as a new server stores them: each
// with a new uid, and with now as its creationTimestamp and the time of
// its managed fields and status conditions.
func (img *Image) Instantiate(now time.Time) (map[string][]byte, error) {
	out := make(map[string][]byte, len(img.objs))
	for k, obj := range img.objs {
		// A deep copy shares the strings of the image's object: fewer
		// allocations than decoding the stored bytes again.
		obj = obj.DeepCopyObject()
		if err := reidentify(obj, uuid.NewUUID(), metav1.NewTime(now)); err != nil {
			return nil, fmt.Errorf("bootstrap image: %s: %w", k, err)
		}
		var err error
		if out[k], err = encode(k, obj); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reidentify gives obj uid, and t as its creationTimestamp and as the
// time of its managed fields (those that have one) and status conditions.
func reidentify(obj runtime.Object, uid types.UID, t metav1.Time) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetUID(uid)
	m.SetCreationTimestamp(t)
	mf := m.GetManagedFields()
	for i := range mf {
		if mf[i].Time != nil {
			tt := t
			mf[i].Time = &tt
		}
	}
	for _, c := range ConditionTimes(obj) {
		*c = t
	}
	return nil
}

// ConditionTimes are the lastTransitionTimes of obj's status conditions,
// for the kinds of an image that have conditions.
func ConditionTimes(obj runtime.Object) []*metav1.Time {
	var out []*metav1.Time
	switch o := obj.(type) {
	case *flowcontrolv1.FlowSchema:
		for i := range o.Status.Conditions {
			out = append(out, &o.Status.Conditions[i].LastTransitionTime)
		}
	case *flowcontrolv1.PriorityLevelConfiguration:
		for i := range o.Status.Conditions {
			out = append(out, &o.Status.Conditions[i].LastTransitionTime)
		}
	case *apiregistrationv1.APIService:
		for i := range o.Status.Conditions {
			out = append(out, &o.Status.Conditions[i].LastTransitionTime)
		}
	}
	return out
}

// Seed writes the objects of an instantiated image into b (a new server's
// empty memory storage, before its hooks run).
func Seed(objs map[string][]byte, b *memory.Backend) error {
	if _, err := b.Apply(objs, nil); err != nil {
		return fmt.Errorf("bootstrap image: %w", err)
	}
	return nil
}

// Start instantiates img (now) on a goroutine of its own, so that it
// overlaps the server's configuration; the function returned waits for
// it.
func (img *Image) Start() func() (map[string][]byte, error) {
	return async(func() (map[string][]byte, error) { return img.Instantiate(time.Now()) })
}

// async runs f on a goroutine of its own; the function returned waits for
// its result.
func async(f func() (map[string][]byte, error)) func() (map[string][]byte, error) {
	type result struct {
		objs map[string][]byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		objs, err := f()
		ch <- result{objs, err}
	}()
	return func() (map[string][]byte, error) {
		r := <-ch
		return r.objs, r.err
	}
}

// The file format of a marshalled image: the magic line, then for each
// object in key order its key and its stored bytes, each preceded by its
// length as a uvarint.
const magic = "kapi bootstrap image v1\n"

// epoch is the time every object of a marshalled image carries (its uid
// is empty): Instantiate replaces both, and a fixed value keeps the file
// the same from one generation to the next when nothing changed.
var epoch = metav1.NewTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))

// Marshal is img in the file format, its objects without identity (see
// epoch).
func (img *Image) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(magic)
	for _, k := range slices.Sorted(maps.Keys(img.objs)) {
		obj := img.objs[k].DeepCopyObject()
		if err := reidentify(obj, "", epoch); err != nil {
			return nil, fmt.Errorf("bootstrap image: %s: %w", k, err)
		}
		data, err := encode(k, obj)
		if err != nil {
			return nil, err
		}
		buf.Write(binary.AppendUvarint(nil, uint64(len(k))))
		buf.WriteString(k)
		buf.Write(binary.AppendUvarint(nil, uint64(len(data))))
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// Unmarshal reads an image in the file format.
func Unmarshal(data []byte) (*Image, error) {
	img := &Image{objs: map[string]runtime.Object{}}
	err := eachRecord(data, func(key string, value []byte) error {
		obj, err := Decode(key, value)
		if err != nil {
			return err
		}
		img.objs[key] = obj
		return nil
	})
	if err != nil {
		return nil, err
	}
	return img, nil
}

// eachRecord calls fn with each key and value of an image in the file
// format (the magic, then length-prefixed key and value pairs), refusing a
// file of another shape or with a key no image holds.
func eachRecord(data []byte, fn func(key string, value []byte) error) error {
	rest, ok := bytes.CutPrefix(data, []byte(magic))
	if !ok {
		return errors.New("bootstrap image: not an image file")
	}
	next := func() ([]byte, error) {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return nil, errors.New("bootstrap image: truncated")
		}
		b := rest[w : w+int(n)]
		rest = rest[w+int(n):]
		return b, nil
	}
	for len(rest) > 0 {
		k, err := next()
		if err != nil {
			return err
		}
		v, err := next()
		if err != nil {
			return err
		}
		if !Holds(string(k)) {
			return fmt.Errorf("bootstrap image: %q is not a key an image holds", k)
		}
		if err := fn(string(k), v); err != nil {
			return err
		}
	}
	return nil
}

//go:embed default.img
var defaultImage []byte

var defaultOnce = sync.OnceValues(func() (*Image, error) { return Unmarshal(defaultImage) })

// StartDefault instantiates the built-in image (see Default) on a
// goroutine of its own: nothing of it is on the caller's path. The
// function returned waits for it.
//
// The file's bytes are re-identified as they are (see instantiateFile),
// without decoding the image, deep-copying and encoding every object
// again: that was ~5 ms of a kapi process's CPU at each start. Should the
// file not have the shape that needs, the image is decoded and
// instantiated as any other.
func StartDefault() func() (map[string][]byte, error) {
	return async(func() (map[string][]byte, error) {
		now := time.Now()
		if objs, err := instantiateFile(defaultImage, now, uuid.NewUUID); err == nil {
			return objs, nil
		}
		img, err := Default()
		if err != nil {
			return nil, err
		}
		return img.Instantiate(now)
	})
}

// instantiateFile is what Instantiate returns for the image in data (the
// file format, as Marshal writes it) at now, each object given the uid
// newUID returns, computed on the stored bytes without decoding them:
//
//   - every object is kapi's protobuf envelope (the "k8s\x00" prefix and a
//     runtime.Unknown) whose raw object has its ObjectMeta as field 1; its
//     uid (field 5) is the empty string in the file, and is replaced;
//   - every time Marshal set (creationTimestamp, managed fields' and
//     status conditions' times) is epoch, which a metav1.Time encodes as
//     the Timestamp message {seconds: 946684800, nanos: 0}; every such
//     message of the raw object is rewritten with now's seconds (as long,
//     as a varint, for the next thousand years), nanos staying 0 (metav1.Time
//     encodes no fraction).
//
// The built-in file is the only input (TestInstantiateFile checks that the
// result is byte for byte what Instantiate makes of it). Anything else
// than that shape is an error, and the caller decodes instead.
func instantiateFile(data []byte, now time.Time, newUID func() types.UID) (map[string][]byte, error) {
	from, to := timestampBody(epoch.Unix()), timestampBody(now.Unix())
	if len(from) != len(to) {
		return nil, errors.New("bootstrap image: the time of now does not encode as epoch does")
	}
	out := map[string][]byte{}
	err := eachRecord(data, func(key string, value []byte) error {
		obj, err := reidentifyStored(value, string(newUID()), from, to)
		if err != nil {
			return fmt.Errorf("bootstrap image: %s: %w", key, err)
		}
		out[key] = obj
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// protobufPrefix starts every object kapi stores as protobuf.
var protobufPrefix = []byte("k8s\x00")

// timestampBody is the encoding of a metav1.Time of sec seconds as a
// Timestamp message's body: seconds (field 1) and nanos (field 2, 0).
func timestampBody(sec int64) []byte {
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(sec))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	return protowire.AppendVarint(b, 0)
}

// reidentifyStored returns the stored object data (a protobuf envelope)
// with uid as its ObjectMeta's uid, which must be empty in data, and
// every Timestamp message whose body is from as one whose body is to (as
// long as from).
func reidentifyStored(data []byte, uid string, from, to []byte) ([]byte, error) {
	env, ok := bytes.CutPrefix(data, protobufPrefix)
	if !ok {
		return nil, errors.New("not a protobuf object")
	}
	out := make([]byte, 0, len(data)+len(uid)+4)
	out = append(out, protobufPrefix...)
	// runtime.Unknown: field 2 is the raw object; the others are copied.
	raws := 0
	err := eachField(env, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
		if num != 2 || typ != protowire.BytesType {
			out = append(out, field...)
			return nil
		}
		raws++
		raw, err := reidentifyRaw(value, uid, from, to)
		if err != nil {
			return err
		}
		out = protowire.AppendTag(out, 2, protowire.BytesType)
		out = protowire.AppendBytes(out, raw)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if raws != 1 {
		return nil, fmt.Errorf("%d raw objects in the envelope", raws)
	}
	return out, nil
}

// reidentifyRaw is reidentifyStored of a raw object (its ObjectMeta is
// field 1).
func reidentifyRaw(raw []byte, uid string, from, to []byte) ([]byte, error) {
	out := make([]byte, 0, len(raw)+len(uid)+2)
	metas := 0
	err := eachField(raw, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
		if num != 1 || typ != protowire.BytesType {
			out = append(out, field...)
			return nil
		}
		metas++
		meta := make([]byte, 0, len(value)+len(uid))
		uids := 0
		if err := eachField(value, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
			if num != 5 || typ != protowire.BytesType {
				meta = append(meta, field...)
				return nil
			}
			uids++
			if len(value) != 0 {
				return errors.New("the stored object has a uid")
			}
			meta = protowire.AppendTag(meta, 5, protowire.BytesType)
			meta = protowire.AppendString(meta, uid)
			return nil
		}); err != nil {
			return err
		}
		if uids != 1 {
			return fmt.Errorf("%d uid fields in the object's metadata", uids)
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, meta)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if metas != 1 {
		return nil, fmt.Errorf("%d metadata fields in the object", metas)
	}
	// Every Timestamp message of body from: its length (one byte, as
	// len(from) < 128), then the body.
	pattern := append([]byte{byte(len(from))}, from...)
	for i := 0; ; {
		j := bytes.Index(out[i:], pattern)
		if j < 0 {
			break
		}
		copy(out[i+j+1:], to)
		i += j + len(pattern)
	}
	return out, nil
}

// eachField calls fn with each field of the protobuf message b: its
// number, wire type, whole encoding (tag included) and, for a
// length-delimited field, its value.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, field, value []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		var value []byte
		var m int
		if typ == protowire.BytesType {
			value, m = protowire.ConsumeBytes(b[n:])
		} else {
			m = protowire.ConsumeFieldValue(num, typ, b[n:])
		}
		if m < 0 {
			return protowire.ParseError(m)
		}
		if err := fn(num, typ, b[:n+m], value); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

// Default is the image of kapi's default options (app.NewOptions with the
// memory backend), made at build time. An error means the embedded file is
// broken: servers then bootstrap from nothing.
func Default() (*Image, error) { return defaultOnce() }
