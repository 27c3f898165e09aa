package options

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Storage backends.
const (
	StorageBackendETCD3  = "etcd3"
	StorageBackendMemory = "memory"
)

// StorageOptions choose and configure the storage backend (DESIGN.md §4).
type StorageOptions struct {
	Backend            string
	ServerList         []string
	Prefix             string
	CompactionInterval time.Duration
	HealthcheckTimeout time.Duration
	ReadycheckTimeout  time.Duration
}

// NewStorageOptions returns the defaults: embedded etcd.
func NewStorageOptions() *StorageOptions {
	return &StorageOptions{
		Backend:            StorageBackendETCD3,
		Prefix:             "/registry",
		CompactionInterval: 5 * time.Minute,
		HealthcheckTimeout: 2 * time.Second,
		ReadycheckTimeout:  2 * time.Second,
	}
}

// AddFlags adds the storage flags to fs.
func (o *StorageOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Backend, "storage-backend", o.Backend, "The storage backend for persistence. Options: 'etcd3' (default; embedded etcd unless --etcd-servers is set), 'memory' (ephemeral).")
	fs.StringSliceVar(&o.ServerList, "etcd-servers", o.ServerList, "List of etcd servers to connect with (scheme://ip:port), comma separated. Empty runs an embedded etcd in <data-dir>/etcd.")
	fs.StringVar(&o.Prefix, "etcd-prefix", o.Prefix, "The prefix to prepend to all resource paths in etcd.")
	fs.DurationVar(&o.CompactionInterval, "etcd-compaction-interval", o.CompactionInterval, "The interval of compaction requests. If 0, the compaction request from apiserver is disabled.")
	fs.DurationVar(&o.HealthcheckTimeout, "etcd-healthcheck-timeout", o.HealthcheckTimeout, "The timeout to use when checking etcd health.")
	fs.DurationVar(&o.ReadycheckTimeout, "etcd-readycheck-timeout", o.ReadycheckTimeout, "The timeout to use when checking etcd readiness.")
}

// Embedded reports whether kapi runs its own etcd.
func (o *StorageOptions) Embedded() bool {
	return o.Backend == StorageBackendETCD3 && len(o.ServerList) == 0
}

// Validate checks the flags.
func (o *StorageOptions) Validate() []error {
	var errs []error
	switch o.Backend {
	case StorageBackendETCD3, StorageBackendMemory:
	default:
		errs = append(errs, fmt.Errorf("--storage-backend invalid, allowed values: %s. If not specified, it will default to 'etcd3'", strings.Join([]string{StorageBackendETCD3, StorageBackendMemory}, ", ")))
	}
	if o.Backend == StorageBackendMemory && len(o.ServerList) > 0 {
		errs = append(errs, errors.New("--etcd-servers can not be set with --storage-backend=memory"))
	}
	for _, s := range o.ServerList {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "unix") || u.Host == "" && u.Scheme != "unix" {
			errs = append(errs, fmt.Errorf("--etcd-servers: %q is not a valid URL (scheme://host:port)", s))
		}
	}
	if o.CompactionInterval < 0 {
		errs = append(errs, errors.New("--etcd-compaction-interval can not be negative value"))
	}
	if o.HealthcheckTimeout <= 0 {
		errs = append(errs, errors.New("--etcd-healthcheck-timeout must be greater than 0"))
	}
	if o.ReadycheckTimeout <= 0 {
		errs = append(errs, errors.New("--etcd-readycheck-timeout must be greater than 0"))
	}
	return errs
}
