package options

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Defaults of [WatchCacheOptions].
const (
	// DefaultWatchCacheSize is upstream's --default-watch-cache-size.
	DefaultWatchCacheSize = 100
	// DefaultWatchCacheMaxEvents caps the event window of every watch
	// cache (cacher.DefaultMaxEventWindow).
	DefaultWatchCacheMaxEvents = 16 * 1024
)

// WatchCacheOptions configure the watch caches in front of etcd (the
// memory backend has none: it serves watches itself).
//
// As kube-apiserver, --watch-cache=false or a size of 0 serves the
// resource straight from etcd. Unlike kube-apiserver (where every non-zero
// size means "enabled", the capacity being dynamic), kapi uses a non-zero
// size as the number of recent events the cache always keeps for resuming
// watches: its capacity by object count. The window grows past it while its
// events are younger than 75 s, up to --watch-cache-max-events (a kapi
// flag), which bounds the memory the cache's history takes under writes.
type WatchCacheOptions struct {
	Enabled     bool
	DefaultSize int
	Sizes       []string // resource[.group]#size
	MaxEvents   int

	// ConsistencyCheckPeriod, if set, replaces how often each watch cache
	// kube-apiserver would have is checked against etcd
	// (cacher.DefaultConsistencyCheckPeriod: every 5 to 7.5 minutes);
	// negative: never. A test seam: there is no flag.
	ConsistencyCheckPeriod time.Duration
}

// NewWatchCacheOptions returns the defaults: enabled, 100 events kept,
// at most 16,384.
func NewWatchCacheOptions() *WatchCacheOptions {
	return &WatchCacheOptions{Enabled: true, DefaultSize: DefaultWatchCacheSize, MaxEvents: DefaultWatchCacheMaxEvents}
}

// AddFlags adds the watch cache flags to fs.
func (o *WatchCacheOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "watch-cache", o.Enabled, "Enable watch caching in the apiserver")
	fs.IntVar(&o.DefaultSize, "default-watch-cache-size", o.DefaultSize, "Default watch cache size. If zero, watch cache will be disabled for resources that do not have a default watch size set. In kapi the size is the number of recent events always kept for resuming watches.")
	fs.StringSliceVar(&o.Sizes, "watch-cache-sizes", o.Sizes, "Watch cache size settings for some resources (pods, nodes, etc.), comma separated. The individual setting format: resource[.group]#size, where resource is lowercase plural (no version), group is omitted for resources of apiVersion v1 (the legacy core API) and included for others, and size is a number. Zero disables watch caching for the resource; in kapi a non-zero size is the number of recent events always kept.")
	fs.IntVar(&o.MaxEvents, "watch-cache-max-events", o.MaxEvents, "The most events a watch cache keeps for resuming watches (kapi): the window grows past a resource's size while its events are younger than 75s, up to this.")
}

// KubeCaches reports whether kube-apiserver, given these flags, would serve
// resource from its watch cache: when enabled, a resource with a size of
// its own (--watch-cache-sizes) if that is not 0, any other if the default
// size is not 0, except events (core and events.k8s.io), which its default
// sizes leave uncached. kapi caches the same resources (Size is not 0).
func (o *WatchCacheOptions) KubeCaches(resource schema.GroupResource) bool {
	if !o.Enabled {
		return false
	}
	return o.Size(resource) != 0
}

// uncachedByDefault reports whether kube-apiserver's default watch cache
// sizes (DefaultWatchCacheSizes: 0) leave resource uncached: the events,
// core and events.k8s.io.
func uncachedByDefault(resource schema.GroupResource) bool {
	return resource.Resource == "events" && (resource.Group == "" || resource.Group == "events.k8s.io")
}

// Validate checks the flags.
func (o *WatchCacheOptions) Validate() []error {
	var errs []error
	if o.DefaultSize < 0 {
		errs = append(errs, fmt.Errorf("--default-watch-cache-size cannot be negative: %d", o.DefaultSize))
	}
	if o.MaxEvents <= 0 {
		errs = append(errs, fmt.Errorf("--watch-cache-max-events must be positive: %d", o.MaxEvents))
	}
	if _, err := ParseWatchCacheSizes(o.Sizes); err != nil {
		errs = append(errs, fmt.Errorf("--watch-cache-sizes: %w", err))
	}
	return errs
}

// ParseWatchCacheSizes parses resource[.group]#size settings.
func ParseWatchCacheSizes(settings []string) (map[schema.GroupResource]int, error) {
	sizes := make(map[schema.GroupResource]int, len(settings))
	var errs []error
	for _, s := range settings {
		res, n, ok := strings.Cut(s, "#")
		if !ok || res == "" || strings.Contains(n, "#") {
			errs = append(errs, fmt.Errorf("invalid value of watch cache size: %s", s))
			continue
		}
		size, err := strconv.Atoi(n)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid size of watch cache size: %s", s))
			continue
		}
		if size < 0 {
			errs = append(errs, fmt.Errorf("watch cache size cannot be negative: %s", s))
			continue
		}
		sizes[schema.ParseGroupResource(res)] = size
	}
	return sizes, errors.Join(errs...)
}

// Size returns the watch cache size of resource (0: no watch cache): its
// own (--watch-cache-sizes), else 0 for the events (as kube-apiserver's
// DefaultWatchCacheSizes: `events#N` caches them), else the default size.
func (o *WatchCacheOptions) Size(resource schema.GroupResource) int {
	if !o.Enabled {
		return 0
	}
	sizes, _ := ParseWatchCacheSizes(o.Sizes) // checked by Validate
	if n, ok := sizes[resource]; ok {
		return n
	}
	if uncachedByDefault(resource) {
		return 0
	}
	return o.DefaultSize
}
