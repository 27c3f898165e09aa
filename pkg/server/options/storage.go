package options

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// Storage backends.
const (
	StorageBackendETCD3  = "etcd3"
	StorageBackendMemory = "memory"
)

// StorageOptions choose and configure the storage backend (DESIGN.md §4).
type StorageOptions struct {
	Backend    string
	ServerList []string
	Prefix     string
	// KeyFile, CertFile and CAFile secure the connection to an external
	// etcd (--etcd-keyfile, --etcd-certfile, --etcd-cafile).
	KeyFile            string
	CertFile           string
	CAFile             string
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
	fs.StringVar(&o.KeyFile, "etcd-keyfile", o.KeyFile, "SSL key file used to secure etcd communication.")
	fs.StringVar(&o.CertFile, "etcd-certfile", o.CertFile, "SSL certification file used to secure etcd communication.")
	fs.StringVar(&o.CAFile, "etcd-cafile", o.CAFile, "SSL Certificate Authority file used to secure etcd communication.")
	fs.StringVar(&o.Prefix, "etcd-prefix", o.Prefix, "The prefix to prepend to all resource paths in etcd.")
	fs.DurationVar(&o.CompactionInterval, "etcd-compaction-interval", o.CompactionInterval, "The interval of compaction requests. If 0, the compaction request from apiserver is disabled.")
	fs.DurationVar(&o.HealthcheckTimeout, "etcd-healthcheck-timeout", o.HealthcheckTimeout, "The timeout to use when checking etcd health.")
	fs.DurationVar(&o.ReadycheckTimeout, "etcd-readycheck-timeout", o.ReadycheckTimeout, "The timeout to use when checking etcd readiness.")
}

// TLSConfig returns the client TLS configuration for an external etcd, or
// nil when no --etcd-cafile, --etcd-certfile or --etcd-keyfile is set (as
// upstream, the client then connects without TLS to http:// endpoints).
func (o *StorageOptions) TLSConfig() (*tls.Config, error) {
	if o.KeyFile == "" && o.CertFile == "" && o.CAFile == "" {
		return nil, nil
	}
	info := transport.TLSInfo{CertFile: o.CertFile, KeyFile: o.KeyFile, TrustedCAFile: o.CAFile}
	c, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--etcd-cafile/--etcd-certfile/--etcd-keyfile: %w", err)
	}
	return c, nil
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
	if (o.KeyFile != "" || o.CertFile != "" || o.CAFile != "") && len(o.ServerList) == 0 {
		errs = append(errs, errors.New("--etcd-cafile, --etcd-certfile and --etcd-keyfile secure the connection to --etcd-servers, which is not set (the embedded etcd is reached through a private unix socket)"))
	}
	if (o.KeyFile == "") != (o.CertFile == "") {
		errs = append(errs, errors.New("--etcd-certfile and --etcd-keyfile must be given together"))
	} else if len(o.ServerList) > 0 {
		// Load the files now, so a bad one fails before anything starts.
		if _, err := o.TLSConfig(); err != nil {
			errs = append(errs, err)
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
