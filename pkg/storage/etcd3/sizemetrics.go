package etcd3

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// sizeTimeout bounds the status requests of one scrape (upstream's
// monitor allows one second).
const sizeTimeout = time.Second

// SizeCollector reports the size of the etcd database client talks to,
// asking etcd at scrape time: apiserver_storage_size_bytes (STABLE; one
// storage cluster, "etcd-0", as upstream numbers its clusters), from the
// first endpoint that answers (k8s.io/apiserver
// pkg/storage/etcd3/metrics/metrics.go's). Its per-endpoint predecessor
// apiserver_storage_db_total_size_in_bytes (deprecated in 1.28) is gone
// from v1.37's source and so not served.
type SizeCollector struct {
	client      *clientv3.Client
	endpoints   []string // nil: the client's
	storageSize *prometheus.Desc
}

var _ prometheus.Collector = (*SizeCollector)(nil)

// NewSizeCollector returns the collector of client's database size, asked
// of the client's endpoints, or of the endpoints given: an in-process
// client (embedded etcd's) has none of its own and asks its one server
// whatever the endpoint.
func NewSizeCollector(client *clientv3.Client, endpoints ...string) *SizeCollector {
	return &SizeCollector{
		client:    client,
		endpoints: endpoints,
		storageSize: prometheus.NewDesc("apiserver_storage_size_bytes",
			"[STABLE] Size of the storage database file physically allocated in bytes.",
			[]string{"storage_cluster_id"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *SizeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.storageSize
}

// Collect implements prometheus.Collector.
func (c *SizeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), sizeTimeout)
	defer cancel()
	eps := c.endpoints
	if eps == nil {
		eps = c.client.Endpoints()
	}
	for _, ep := range eps {
		st, err := c.client.Status(ctx, ep)
		if err != nil {
			continue
		}
		// The members of one cluster share one database size.
		ch <- prometheus.MustNewConstMetric(c.storageSize, prometheus.GaugeValue, float64(st.DbSize), "etcd-0")
		return
	}
}
