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
// storage cluster, "etcd-0", as upstream numbers its clusters) and
// apiserver_storage_db_total_size_in_bytes per endpoint (deprecated since
// 1.28, which v1.37 hides; reported because dashboards still read it).
// An endpoint that does not answer is left out. Both are
// k8s.io/apiserver pkg/storage/etcd3/metrics/metrics.go's.
type SizeCollector struct {
	client      *clientv3.Client
	endpoints   []string // nil: the client's
	storageSize *prometheus.Desc
	dbTotalSize *prometheus.Desc
}

var _ prometheus.Collector = (*SizeCollector)(nil)

// NewSizeCollector returns the collector of client's database size, per
// endpoint of the client, or per endpoint given: an in-process client
// (embedded etcd's) has none of its own and asks its one server whatever
// the endpoint; the endpoint it is reported under is then the server's
// socket.
func NewSizeCollector(client *clientv3.Client, endpoints ...string) *SizeCollector {
	return &SizeCollector{
		client:    client,
		endpoints: endpoints,
		storageSize: prometheus.NewDesc("apiserver_storage_size_bytes",
			"[STABLE] Size of the storage database file physically allocated in bytes.",
			[]string{"storage_cluster_id"}, nil),
		dbTotalSize: prometheus.NewDesc("apiserver_storage_db_total_size_in_bytes",
			"[ALPHA] (Deprecated since 1.28.0) Total size of the storage database file physically allocated in bytes.",
			[]string{"endpoint"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *SizeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.storageSize
	ch <- c.dbTotalSize
}

// Collect implements prometheus.Collector.
func (c *SizeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), sizeTimeout)
	defer cancel()
	reported := false
	eps := c.endpoints
	if eps == nil {
		eps = c.client.Endpoints()
	}
	for _, ep := range eps {
		st, err := c.client.Status(ctx, ep)
		if err != nil {
			continue
		}
		size := float64(st.DbSize)
		ch <- prometheus.MustNewConstMetric(c.dbTotalSize, prometheus.GaugeValue, size, ep)
		if !reported {
			// The members of one cluster share one database size.
			ch <- prometheus.MustNewConstMetric(c.storageSize, prometheus.GaugeValue, size, "etcd-0")
			reported = true
		}
	}
}
