package audit

import (
	"encoding/json"
	"errors"
	"log/slog"
)

// PluginTruncate names the truncating backend in
// apiserver_audit_error_total, as upstream's plugin/pkg/audit/truncate.
const PluginTruncate = "truncate"

// Upstream's truncation defaults (--audit-*-truncate-max-event-size and
// --audit-*-truncate-max-batch-size).
const (
	DefaultTruncateMaxEventSize = 100 * 1024
	DefaultTruncateMaxBatchSize = 10 * 1024 * 1024
)

// truncatedAnnotation marks an event whose request and response objects
// were dropped.
const truncatedAnnotation = "audit.k8s.io/truncated"

// TruncateConfig limits the events and batches a backend receives.
type TruncateConfig struct {
	// MaxEventSize is the largest serialized event passed on: a bigger
	// one loses its request and response objects (at Request level and
	// above), and is dropped if still too big.
	MaxEventSize int64
	// MaxBatchSize is the most bytes of events passed on in one call;
	// bigger calls are split.
	MaxBatchSize int64
}

// Truncate wraps a backend as upstream's truncating backend
// (k8s.io/apiserver plugin/pkg/audit/truncate, v1.37): each event's
// size is its JSON encoding; an event over MaxEventSize at Request level
// or above is passed on without requestObject and responseObject and
// with the annotation audit.k8s.io/truncated: "true"; one still too big
// is dropped (counted in apiserver_audit_error_total{plugin="truncate"}
// and logged); events are passed on in batches of at most MaxBatchSize
// bytes (a single event always goes).
func Truncate(delegate Backend, cfg TruncateConfig, m *Metrics, logger *slog.Logger) Backend {
	if logger == nil {
		logger = slog.Default()
	}
	return &truncating{delegate: delegate, cfg: cfg, metrics: m, logger: logger}
}

type truncating struct {
	delegate Backend
	cfg      TruncateConfig
	metrics  *Metrics
	logger   *slog.Logger
}

var errTooLarge = errors.New("event is too large even after truncating")

// ProcessEvents implements Backend.
func (t *truncating) ProcessEvents(events ...*Event) bool {
	var batch []*Event
	var batchSize int64
	ok := true
	dropped := 0
	for _, ev := range events {
		size, err := eventSize(ev)
		if err == nil && size > t.cfg.MaxEventSize && !ev.Level.Less(LevelRequest) {
			ev = truncateEvent(ev)
			size, err = eventSize(ev)
		}
		if err == nil && size > t.cfg.MaxEventSize {
			err = errTooLarge
		}
		if err != nil {
			dropped++
			t.logger.Error("audit event not passed on", "plugin", PluginTruncate, "auditID", ev.AuditID, "err", err)
			continue
		}
		if len(batch) > 0 && batchSize+size > t.cfg.MaxBatchSize {
			ok = t.delegate.ProcessEvents(batch...) && ok
			batch, batchSize = nil, 0
		}
		batch = append(batch, ev)
		batchSize += size
	}
	if len(batch) > 0 {
		ok = t.delegate.ProcessEvents(batch...) && ok
	}
	if dropped > 0 {
		t.metrics.PluginError(PluginTruncate, dropped)
	}
	return ok
}

// Run implements Backend.
func (t *truncating) Run(stopCh <-chan struct{}) error { return t.delegate.Run(stopCh) }

// Shutdown implements Backend.
func (t *truncating) Shutdown() { t.delegate.Shutdown() }

func eventSize(ev *Event) (int64, error) {
	b, err := json.Marshal(ev)
	return int64(len(b)), err
}

// truncateEvent is a copy of ev without request and response objects,
// annotated as truncated (ev is shared with other backends: not changed).
func truncateEvent(ev *Event) *Event {
	out := *ev
	out.RequestObject, out.ResponseObject = nil, nil
	out.Annotations = make(map[string]string, len(ev.Annotations)+1)
	for k, v := range ev.Annotations {
		out.Annotations[k] = v
	}
	out.Annotations[truncatedAnnotation] = "true"
	return &out
}
