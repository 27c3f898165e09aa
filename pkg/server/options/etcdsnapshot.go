package options

import (
	"crypto/tls"
	"errors"

	"github.com/spf13/pflag"
)

// EtcdSnapshotOptions are the flags of `kapi etcd snapshot save|restore`:
// the kapi data dir whose embedded etcd (<data-dir>/etcd) is saved or
// restored, or, for save, an external etcd (--etcd-servers and its TLS
// flags, named as kapi's own).
type EtcdSnapshotOptions struct {
	DataDir  string
	External StorageOptions
}

// NewEtcdSnapshotOptions returns the defaults: kapi's default data dir
// (as kapi's --data-dir).
func NewEtcdSnapshotOptions() *EtcdSnapshotOptions {
	return &EtcdSnapshotOptions{DataDir: "./kapi-data"}
}

// AddFlags adds --data-dir, and with external the --etcd-servers flags.
func (o *EtcdSnapshotOptions) AddFlags(fs *pflag.FlagSet, external bool) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "kapi's data directory, whose embedded etcd is <data-dir>/etcd. For save, an etcd data directory (one holding member/, as kapi etcd's --data-dir) is read directly.")
	if !external {
		return
	}
	fs.StringSliceVar(&o.External.ServerList, "etcd-servers", nil, "An external etcd member to snapshot (scheme://ip:port); overrides --data-dir. Only one: a snapshot is one member's copy.")
	fs.StringVar(&o.External.CAFile, "etcd-cafile", "", "SSL Certificate Authority file used to secure etcd communication.")
	fs.StringVar(&o.External.CertFile, "etcd-certfile", "", "SSL certification file used to secure etcd communication.")
	fs.StringVar(&o.External.KeyFile, "etcd-keyfile", "", "SSL key file used to secure etcd communication.")
}

// Validate checks the flags.
func (o *EtcdSnapshotOptions) Validate() []error {
	var errs []error
	if len(o.External.ServerList) > 1 {
		errs = append(errs, errors.New("--etcd-servers: a snapshot is taken from one member, got several"))
	}
	if len(o.External.ServerList) == 0 && o.DataDir == "" {
		errs = append(errs, errors.New("--data-dir or --etcd-servers is required"))
	}
	return errs
}

// TLSConfig is the client TLS configuration for --etcd-servers (nil
// without TLS flags).
func (o *EtcdSnapshotOptions) TLSConfig() (*tls.Config, error) {
	return o.External.TLSConfig()
}
