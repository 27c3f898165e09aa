package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/kapi-dev/kapi/pkg/server/healthz"
	"github.com/kapi-dev/kapi/pkg/server/options"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// storageBundle is the storage the chain runs on: an etcd client (embedded
// or external) or the memory backend.
type storageBundle struct {
	embedded *embedded.Server
	client   *clientv3.Client
	memory   *memory.Backend
	stop     func()
	// health checks etcd (nil on the memory backend); componentstatuses
	// report it as etcd-0.
	health func(ctx context.Context) error
	// localReads: the stores read serializably (a single-member embedded
	// etcd, where that is linearizable; etcd3.Config.LocalReads). The
	// health checks keep linearizable reads, which go through raft.
	localReads bool
}

// close stops compaction, then the client, then the embedded etcd: storage
// is the last thing to close, after requests drained.
func (b *storageBundle) close() {
	if b.stop != nil {
		b.stop()
	}
	if b.memory != nil {
		_ = b.memory.Close()
	}
	if b.embedded != nil {
		b.embedded.Close() // closes its own client too
		return
	}
	if b.client != nil {
		_ = b.client.Close()
	}
}

// reconnectParams is how the external etcd client reconnects. gRPC's
// default backoff grows to 120 s between attempts (1 s × 1.6 per attempt,
// ±20%): after a two-minute etcd outage the first write waited 51 s for
// the next attempt (issue 12 point 13). Capped at 2 s, kapi reconnects
// within about 2 s of etcd coming back, at the cost of one connection
// attempt per 2 s per endpoint while etcd is down. Each attempt may take
// as long as the dial timeout (a TLS handshake to a distant etcd).
var reconnectParams = grpc.ConnectParams{
	Backoff: backoff.Config{
		BaseDelay:  100 * time.Millisecond,
		Multiplier: 1.6,
		Jitter:     0.2,
		MaxDelay:   2 * time.Second,
	},
	MinConnectTimeout: 20 * time.Second,
}

// applyStorage starts storage and adds its health checks (health.md 18–19).
func (c *Config) applyStorage() error {
	o := c.Options.Storage
	b := &storageBundle{}
	var err error
	// --show-hidden-metrics-for-version brings back the deprecated
	// storage families kube-apiserver v1.37 hides (all that it hides are
	// storage ones).
	showHidden := c.Options.Metrics != nil && c.Options.Metrics.ShowHidden()
	if c.StorageMetrics, err = storagemetrics.NewWithOptions(c.Generic.MetricsRegistry, storagemetrics.Options{ShowHidden: showHidden}); err != nil {
		return fmt.Errorf("storage metrics: %w", err)
	}
	switch {
	case o.Backend == options.StorageBackendMemory:
		// History is compacted as etcd's is (--etcd-compaction-interval):
		// without it the memory backend grows with every write.
		b.memory = memory.NewBackend(memory.BackendConfig{Logger: c.Logger, Metrics: c.StorageMetrics, CompactionInterval: o.CompactionInterval})
		c.storage = b
		c.addCleanup(b.close)
		c.Logger.Info("storage: memory (ephemeral)")
		return nil
	case o.Embedded():
		start := time.Now()
		srv, err := embedded.Start(context.Background(), embedded.Config{
			DataDir: filepath.Join(c.Options.DataDir, "etcd"),
			Logger:  c.Logger,
			Cluster: c.clusterEtcd(),
			// kapitest's temporary data dir (see Options.UnsafeNoFsync).
			UnsafeNoFsync: c.Options.UnsafeNoFsync,
		})
		if err != nil {
			return fmt.Errorf("start embedded etcd: %w", err)
		}
		b.embedded = srv
		b.client = srv.Client()
		b.localReads = srv.SerializableReadsLinearizable()
		c.Logger.Info("storage: embedded etcd", "dataDir", filepath.Join(c.Options.DataDir, "etcd"), "readyIn", time.Since(start))
	default:
		tlsConfig, err := o.TLSConfig()
		if err != nil {
			return err
		}
		client, err := clientv3.New(clientv3.Config{
			Endpoints:   o.ServerList,
			TLS:         tlsConfig,
			DialTimeout: 20 * time.Second,
			// As upstream: a connection that stops answering is
			// noticed within 40 s even when no request is in flight.
			DialKeepAliveTime:    30 * time.Second,
			DialKeepAliveTimeout: 10 * time.Second,
			DialOptions:          []grpc.DialOption{grpc.WithConnectParams(reconnectParams)},
			Logger:               embedded.NewZapLogger(c.Logger, zapcore.WarnLevel),
		})
		if err != nil {
			return fmt.Errorf("connect to --etcd-servers %v: %w", o.ServerList, err)
		}
		b.client = client
		c.Logger.Info("storage: external etcd", "servers", o.ServerList, "tls", tlsConfig != nil)
	}
	c.storage = b
	c.addCleanup(b.close)
	// The database size (apiserver_storage_size_bytes), read at scrape
	// time.
	var sizeEndpoints []string // the client's own
	if b.embedded != nil {
		sizeEndpoints = b.embedded.Endpoints() // its client is in-process
	}
	if err := c.Generic.MetricsRegistry.Register(etcd3.NewSizeCollector(b.client, sizeEndpoints...)); err != nil {
		return fmt.Errorf("storage size metrics: %w", err)
	}

	if o.CompactionInterval > 0 {
		b.stop = etcd3.StartCompactor(context.Background(), b.client, o.CompactionInterval, c.Logger)
	}

	client := func() *clientv3.Client { return b.client }
	health := etcd3.NewHealthCheck(client, o.Prefix, o.HealthcheckTimeout)
	ready := etcd3.NewHealthCheck(client, o.Prefix, o.ReadycheckTimeout)
	b.health = health
	drained := c.Generic.LifecycleSignals.InFlightRequestsDrained.Signaled()
	etcdCheck := healthz.NamedGroupedCheck("etcd", "etcd", func(r *http.Request) error {
		select {
		case <-drained:
			return errors.New("server is shutting down")
		default:
		}
		return health(r.Context())
	})
	c.Generic.HealthzChecks = append(c.Generic.HealthzChecks, etcdCheck)
	c.Generic.LivezChecks = append(c.Generic.LivezChecks, etcdCheck)
	c.Generic.ReadyzChecks = append(c.Generic.ReadyzChecks,
		etcdCheck,
		healthz.NamedGroupedCheck("etcd-readiness", "etcd-readiness", func(r *http.Request) error {
			return ready(r.Context())
		}))
	return nil
}

// StorageClient is the etcd client the chain's storage uses (embedded or
// external), or nil on the memory backend.
func (c *Config) StorageClient() *clientv3.Client {
	if c.storage == nil {
		return nil
	}
	return c.storage.client
}
