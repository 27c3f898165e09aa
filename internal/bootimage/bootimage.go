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
	rest, ok := bytes.CutPrefix(data, []byte(magic))
	if !ok {
		return nil, errors.New("bootstrap image: not an image file")
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
	img := &Image{objs: map[string]runtime.Object{}}
	for len(rest) > 0 {
		k, err := next()
		if err != nil {
			return nil, err
		}
		v, err := next()
		if err != nil {
			return nil, err
		}
		if !Holds(string(k)) {
			return nil, fmt.Errorf("bootstrap image: %q is not a key an image holds", k)
		}
		obj, err := Decode(string(k), v)
		if err != nil {
			return nil, err
		}
		img.objs[string(k)] = obj
	}
	return img, nil
}

//go:embed default.img
var defaultImage []byte

var defaultOnce = sync.OnceValues(func() (*Image, error) { return Unmarshal(defaultImage) })

// StartDefault instantiates the built-in image (see Default) on a
// goroutine of its own, reading it first if no server of the process did:
// nothing of it is on the caller's path. The function returned waits for
// it.
func StartDefault() func() (map[string][]byte, error) {
	return async(func() (map[string][]byte, error) {
		img, err := Default()
		if err != nil {
			return nil, err
		}
		return img.Instantiate(time.Now())
	})
}

// Default is the image of kapi's default options (app.NewOptions with the
// memory backend), made at build time. An error means the embedded file is
// broken: servers then bootstrap from nothing.
func Default() (*Image, error) { return defaultOnce() }
