package app

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/server/metricsfilter"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// newMetricsFilter returns what /metrics serves: reg's families, without
// those --disabled-metrics names and with --allow-metric-labels' (or the
// manifest's) label allow-lists applied; it registers component-base's
// meta families disabled_metrics_total, hidden_metrics_total and
// cardinality_enforcement_unexpected_categorizations_total on reg.
func newMetricsFilter(o *Options, reg *prometheus.Registry) (prometheus.Gatherer, error) {
	var cfg metricsfilter.Config
	if m := o.Metrics; m != nil {
		allow, err := m.LabelAllowList()
		if err != nil {
			return nil, fmt.Errorf("metrics label allow-list: %w", err)
		}
		cfg = metricsfilter.Config{Disabled: m.DisabledMetrics, AllowLists: allow}
	}
	// The deprecated storage families kube-apiserver v1.37 hides unless
	// --show-hidden-metrics-for-version shows them, counted in
	// hidden_metrics_total.
	cfg.Deprecated = storagemetrics.HiddenFamilies
	if o.Metrics == nil || !o.Metrics.ShowHidden() {
		cfg.Hidden = storagemetrics.HiddenFamilies
	}
	f, err := metricsfilter.New(reg, reg, cfg)
	if err != nil {
		return nil, fmt.Errorf("metrics filter: %w", err)
	}
	return f, nil
}
