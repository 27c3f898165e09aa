package reload

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultInterval is how often the file is checked (upstream checks
// both configuration files every minute).
const DefaultInterval = time.Minute

// Metrics are one configuration's reload metrics. Source:
// k8s.io/apiserver/pkg/authentication/... and authorization metrics
// packages (subsystems authentication_config_controller and
// authorization_config_controller).
type Metrics struct {
	total *prometheus.CounterVec
	last  *prometheus.GaugeVec
	info  *prometheus.GaugeVec

	mu       sync.Mutex
	infoHash string
}

// NewMetrics registers the metrics of subsystem on reg.
func NewMetrics(reg prometheus.Registerer, subsystem, what string) (*Metrics, error) {
	m := &Metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: subsystem, Name: "automatic_reloads_total",
			Help: "Total number of automatic reloads of " + what + " configuration split by status and apiserver identity."},
			[]string{"status", "apiserver_id_hash"}),
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "apiserver", Subsystem: subsystem, Name: "automatic_reload_last_timestamp_seconds",
			Help: "Timestamp of the last automatic reload of " + what + " configuration split by status and apiserver identity."},
			[]string{"status", "apiserver_id_hash"}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "apiserver", Subsystem: subsystem, Name: "last_config_info",
			Help: "Information about the last applied " + what + " configuration with hash as label, split by apiserver identity."},
			[]string{"apiserver_id_hash", "hash"}),
	}
	for _, c := range []prometheus.Collector{m.total, m.last, m.info} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register %s metrics: %w", subsystem, err)
		}
	}
	return m, nil
}

// Hash is how the metrics name a value: "sha256:<hex>" ("" for nothing).
func Hash(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}

func (m *Metrics) record(status, idHash string) {
	m.total.WithLabelValues(status, idHash).Inc()
	m.last.WithLabelValues(status, idHash).SetToCurrentTime()
}

// ConfigInfo records the configuration in force (its content).
func (m *Metrics) ConfigInfo(idHash string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := Hash(data)
	if m.infoHash != "" && m.infoHash != h {
		m.info.DeleteLabelValues(idHash, m.infoHash)
	}
	m.infoHash = h
	m.info.WithLabelValues(idHash, m.infoHash).Set(1)
}

// Watcher applies a file's content whenever it changes.
type Watcher struct {
	// Path is the file.
	Path string
	// Interval is how often it is read (DefaultInterval if 0).
	Interval time.Duration
	// Apply validates and puts a new content in force; an error keeps the
	// current configuration.
	Apply func(data []byte) error
	// Metrics (nil: none) and the hash of the server's identity.
	Metrics *Metrics
	IDHash  string
	Logger  *slog.Logger
}

// Run checks the file until ctx ends; loaded is the content in force when
// the server started (a change is a difference from it).
func (w *Watcher) Run(ctx context.Context, loaded []byte) {
	interval := w.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	logger := w.Logger
	if logger == nil {
		logger = slog.Default()
	}
	current := loaded
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		data, err := os.ReadFile(w.Path)
		if err != nil {
			// A missing or unreadable file is a failed reload, as
			// upstream's (the last good configuration stays).
			logger.Error("configuration reload: reading the file failed", "path", w.Path, "err", err)
			w.fail()
			current = nil
			continue
		}
		if bytes.Equal(data, current) {
			continue
		}
		if err := w.Apply(data); err != nil {
			logger.Error("configuration reload: the new configuration is invalid; keeping the last good one", "path", w.Path, "err", err)
			w.fail()
			current = data // do not retry the same bad content every tick
			continue
		}
		current = data
		logger.Info("configuration reloaded", "path", w.Path)
		if w.Metrics != nil {
			// The configuration in force first: whoever sees the success
			// counted sees its info.
			w.Metrics.ConfigInfo(w.IDHash, data)
			w.Metrics.record("success", w.IDHash)
		}
	}
}

func (w *Watcher) fail() {
	if w.Metrics != nil {
		w.Metrics.record("failure", w.IDHash)
	}
}
