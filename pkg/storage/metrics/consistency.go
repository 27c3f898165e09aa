package metrics

// Values of the status label of apiserver_storage_consistency_checks_total
// (k8s.io/apiserver's cacher consistency checker).
const (
	ConsistencySuccess = "success"
	ConsistencyFailure = "failure"
	ConsistencyError   = "error"
)

// ConsistencyCheck counts one check of the watch cache against etcd with
// its outcome: ConsistencySuccess, ConsistencyFailure or ConsistencyError.
func (c *Cache) ConsistencyCheck(status string) {
	if c != nil {
		c.r.m.consistencyChecks.WithLabelValues(c.r.gr.Group, c.r.gr.Resource, status).Inc()
	}
}
