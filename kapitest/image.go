package kapitest

import (
	"fmt"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/internal/bootimage"
)

// A server on the memory backend starts from a bootstrap image (see
// package internal/bootimage) of its options when there is one: the
// image of the default options is built into kapi (bootimage.Default);
// the image of other option sets is made by the process's first server of
// those options, from what its hooks wrote, and kept for the process.

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

// bootstrapImage is an image kept by the process: img nil when the
// process could not make one (see keepBootstrapImage).
type bootstrapImage struct{ img *bootimage.Image }

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

// defaultImageKey is the key of the default options: theirs is the
// built-in image.
var defaultImageKey, _ = imageKeyOf(Options{StorageBackend: "memory"})

// instantiateBootstrapImage starts instantiating the image of key, if
// there is one, on a goroutine of its own (it overlaps NewConfig): the
// built-in one for the default options (a broken one fails the start:
// TestDefaultImage would have caught it), else the one the process made.
// The function returned waits for it (nil: no image).
func instantiateBootstrapImage(key imageKey) func() (map[string][]byte, error) {
	if key == defaultImageKey {
		return bootimage.StartDefault()
	}
	v, ok := images.Load(key)
	if !ok || v.(*bootstrapImage).img == nil {
		return nil
	}
	return v.(*bootstrapImage).img.Start()
}

// keepBootstrapImage makes state the image of key unless there is one
// already. An image that cannot be made is not an error of the server's:
// it is returned to be logged, and the next servers bootstrap from
// nothing as this one did (the failure is kept, not retried).
func keepBootstrapImage(key imageKey, state map[string][]byte) error {
	if key == defaultImageKey {
		return nil // built in
	}
	if _, ok := images.Load(key); ok {
		return nil
	}
	img, err := bootimage.New(state)
	images.LoadOrStore(key, &bootstrapImage{img: img})
	return err
}
