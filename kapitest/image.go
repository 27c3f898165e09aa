package kapitest

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// A bootstrap image is what a server's post-start hooks wrote into its
// memory storage before it was ready (the RBAC bootstrap policy, the
// priority-and-fairness configuration, the local APIServices, the system
// PriorityClasses and Namespaces), kept once per process and per option
// set. Later memory-backend servers with the same options start with it
// in their storage, each object with the new server's own identity (a new
// uid, creationTimestamp and managed-fields and condition times of now,
// the store's own resourceVersions), and then run the same hooks, which
// find every object present and current and write nothing: what
// kube-apiserver does when restarted on its existing etcd data. The
// hooks' creates through the handler chain (and their audit events,
// admission and metrics) happen in the first server of the process only.
//
// Objects that hold something of the server (its CA bundle ConfigMaps,
// the kubernetes Service and its endpoints with the server's port and
// address, the cluster IP allocation, leases with holders, ServiceAccounts
// made by its controllers) are not in the image: the server makes them as
// on any start.
type bootstrapImage struct {
	// objs maps a storage key to its object as decoded from storage;
	// never written once built (instantiate works on deep copies). nil:
	// the process could not make the image (see keepBootstrapImage).
	objs map[string]runtime.Object
}

// imagePrefixes are the memory-backend key prefixes whose objects the
// image holds.
var imagePrefixes = []string{
	"/rbac.authorization.k8s.io/",
	"/flowcontrol.apiserver.k8s.io/",
	"/apiregistration.k8s.io/apiservices/",
	"/scheduling.k8s.io/priorityclasses/",
	"/namespaces/",
}

// imageKey is every option that may change what a server bootstraps. A
// server whose options cannot be keyed (files that differ per test, which
// would make an image per test; audit, which must see the bootstrap
// requests) neither uses nor makes one.
type imageKey struct {
	bindAddress, serviceCIDR, kubernetesVersion string
	cors, hsts                                  string
	eventTTL, compaction, availability, reload  time.Duration
}

// images maps an imageKey to its *bootstrapImage.
var images sync.Map

// imageKeyOf returns o's image key; ok is false when o's servers neither
// use nor make an image.
func imageKeyOf(o Options) (k imageKey, ok bool) {
	if o.coldBootstrap || o.StorageBackend != "memory" || len(o.Flags) > 0 ||
		o.AuditLogPath != "" || o.RequestHeaderClientCAFile != "" {
		return imageKey{}, false
	}
	return imageKey{
		bindAddress: o.BindAddress, serviceCIDR: o.ServiceClusterIPRange,
		kubernetesVersion: o.KubernetesVersion,
		// nil and empty are different options (nil keeps kapi's default).
		cors: fmt.Sprintf("%#v", o.CORSAllowedOrigins), hsts: fmt.Sprintf("%#v", o.HSTSDirectives),
		eventTTL: o.EventTTL, compaction: o.CompactionInterval,
		availability: o.APIServiceAvailabilityPeriod, reload: o.ConfigReloadInterval,
	}, true
}

// inImage reports whether the object at key belongs in an image.
func inImage(key string) bool {
	for _, p := range imagePrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

var (
	imageDecoder    = scheme.Codecs.UniversalDeserializer()
	imageSerializer = func() runtime.Serializer {
		info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
		if !ok {
			panic("kapitest: no protobuf serializer")
		}
		return info.Serializer
	}()
)

// newBootstrapImage keeps the image objects of state (a memory backend's
// content when Start returns), decoded. Every object must encode back to the bytes
// it was read from, as instantiate encodes them: otherwise there is no
// image.
func newBootstrapImage(state map[string][]byte) (*bootstrapImage, error) {
	img := &bootstrapImage{objs: map[string]runtime.Object{}}
	for k, v := range state {
		if !inImage(k) {
			continue
		}
		obj, err := decodeImageObject(k, v)
		if err != nil {
			return nil, err
		}
		data, err := encodeImageObject(k, obj)
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

func decodeImageObject(key string, data []byte) (runtime.Object, error) {
	obj, _, err := imageDecoder.Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("bootstrap image: decode %s: %w", key, err)
	}
	return obj, nil
}

func encodeImageObject(key string, obj runtime.Object) ([]byte, error) {
	gv := obj.GetObjectKind().GroupVersionKind().GroupVersion()
	var buf bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(imageSerializer, gv).Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("bootstrap image: encode %s: %w", key, err)
	}
	return buf.Bytes(), nil
}

// instantiate returns the image's objects as a new server stores them:
// each with a new uid, and with now as its creationTimestamp and the time
// of its managed fields and status conditions.
func (img *bootstrapImage) instantiate(now time.Time) (map[string][]byte, error) {
	out := make(map[string][]byte, len(img.objs))
	for k, obj := range img.objs {
		// A deep copy shares the strings of the image's object: fewer
		// allocations than decoding the stored bytes again.
		obj = obj.DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("bootstrap image: %s: %w", k, err)
		}
		m.SetUID(uuid.NewUUID())
		m.SetCreationTimestamp(metav1.NewTime(now))
		mf := m.GetManagedFields()
		for i := range mf {
			if mf[i].Time != nil {
				t := metav1.NewTime(now)
				mf[i].Time = &t
			}
		}
		switch o := obj.(type) {
		case *flowcontrolv1.FlowSchema:
			for i := range o.Status.Conditions {
				o.Status.Conditions[i].LastTransitionTime = metav1.NewTime(now)
			}
		case *flowcontrolv1.PriorityLevelConfiguration:
			for i := range o.Status.Conditions {
				o.Status.Conditions[i].LastTransitionTime = metav1.NewTime(now)
			}
		case *apiregistrationv1.APIService:
			for i := range o.Status.Conditions {
				o.Status.Conditions[i].LastTransitionTime = metav1.NewTime(now)
			}
		}
		if out[k], err = encodeImageObject(k, obj); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// instantiateBootstrapImage starts instantiating the image of key, if the
// process has one, on a goroutine of its own (it overlaps NewConfig); the
// function returned waits for it (nil: no image).
func instantiateBootstrapImage(key imageKey) func() (map[string][]byte, error) {
	v, ok := images.Load(key)
	if !ok || v.(*bootstrapImage).objs == nil {
		return nil
	}
	type result struct {
		objs map[string][]byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		objs, err := v.(*bootstrapImage).instantiate(time.Now())
		ch <- result{objs, err}
	}()
	return func() (map[string][]byte, error) {
		r := <-ch
		return r.objs, r.err
	}
}

// seedBootstrapImage writes the objects of an instantiated image into b
// (a new server's empty memory storage, before its hooks run).
func seedBootstrapImage(objs map[string][]byte, b *memory.Backend) error {
	if _, err := b.Apply(objs, nil); err != nil {
		return fmt.Errorf("bootstrap image: %w", err)
	}
	return nil
}

// keepBootstrapImage makes state the image of key unless the process has
// one already. An image that cannot be made is not an error of the
// server's: it is returned to be logged, and the next servers bootstrap
// from nothing as this one did (the failure is kept, not retried).
func keepBootstrapImage(key imageKey, state map[string][]byte) error {
	if _, ok := images.Load(key); ok {
		return nil
	}
	img, err := newBootstrapImage(state)
	if err != nil {
		img = &bootstrapImage{}
	}
	images.LoadOrStore(key, img)
	return err
}
