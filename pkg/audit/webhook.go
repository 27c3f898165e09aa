package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// PluginWebhook is the plugin label of the webhook backend's errors.
const PluginWebhook = "webhook"

// Webhook modes (--audit-webhook-mode).
const (
	ModeBatch          = "batch"
	ModeBlocking       = "blocking"
	ModeBlockingStrict = "blocking-strict"
)

// WebhookConfig configures the webhook backend, with upstream's flag
// defaults (k8s.io/apiserver pkg/server/options/audit.go).
type WebhookConfig struct {
	// KubeconfigFile is --audit-webhook-config-file: where events are
	// POSTed (the first cluster's server) and with which credentials.
	KubeconfigFile string
	// Mode is --audit-webhook-mode.
	Mode string
	// InitialBackoff is --audit-webhook-initial-backoff: the wait before
	// retrying a failed request, doubled at each of the retries.
	InitialBackoff time.Duration
	// BufferSize, MaxBatchSize, MaxBatchWait, ThrottleEnable, ThrottleQPS,
	// ThrottleBurst are the --audit-webhook-batch-* flags (batch mode).
	BufferSize     int
	MaxBatchSize   int
	MaxBatchWait   time.Duration
	ThrottleEnable bool
	ThrottleQPS    float32
	ThrottleBurst  int
	// WrapTransport, if set, wraps the client's transport (kapi counts
	// calls to servers with deprecated certificates with it, as
	// upstream's webhook client does). Not a flag.
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// DefaultWebhookConfig returns upstream's defaults.
func DefaultWebhookConfig() WebhookConfig {
	return WebhookConfig{
		Mode: ModeBatch, InitialBackoff: 10 * time.Second,
		BufferSize: 10000, MaxBatchSize: 400, MaxBatchWait: 30 * time.Second,
		ThrottleEnable: true, ThrottleQPS: 10, ThrottleBurst: 15,
	}
}

// webhookRetries is how many times a failed POST is retried (upstream's
// DefaultRetryBackoffWithInitialDelay: 5 steps).
const webhookRetries = 4

// WebhookBackend POSTs audit.k8s.io/v1 EventLists to a webhook. In batch
// mode events are buffered (ProcessEvents never blocks: when the buffer is
// full the events are dropped, logged and counted as errors, and the
// request is not failed, as upstream) and sent in batches of
// up to MaxBatchSize, or whatever is buffered after MaxBatchWait, at most
// ThrottleQPS batches per second; Shutdown sends everything buffered. In
// blocking modes each ProcessEvents call is one POST; in blocking-strict a
// failed POST makes ProcessEvents return false (the request it records at
// RequestReceived then fails, as upstream).
type WebhookBackend struct {
	cfg     WebhookConfig
	url     string
	client  *http.Client
	logger  *slog.Logger
	metrics *Metrics
	limiter *rate.Limiter

	buffer   chan *Event
	mu       sync.RWMutex // senders hold R; Shutdown takes W before closing buffer
	closed   bool
	started  bool
	done     chan struct{}
	sends    sync.WaitGroup
	shutdown sync.Once
}

var _ Backend = (*WebhookBackend)(nil)

// NewWebhookBackend reads cfg.KubeconfigFile and returns the backend.
func NewWebhookBackend(cfg WebhookConfig, logger *slog.Logger, m *Metrics) (*WebhookBackend, error) {
	switch cfg.Mode {
	case ModeBatch, ModeBlocking, ModeBlockingStrict:
	default:
		return nil, fmt.Errorf("invalid audit webhook mode %q, allowed modes are %q", cfg.Mode, ModeBatch+","+ModeBlocking+","+ModeBlockingStrict)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.KubeconfigFile)
	if err != nil {
		return nil, fmt.Errorf("audit webhook config file %q: %w", cfg.KubeconfigFile, err)
	}
	if cfg.WrapTransport != nil {
		rc.Wrap(cfg.WrapTransport)
	}
	client, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("audit webhook client: %w", err)
	}
	if rc.Timeout == 0 {
		client.Timeout = 30 * time.Second
	}
	if logger == nil {
		logger = slog.Default()
	}
	b := &WebhookBackend{cfg: cfg, url: rc.Host, client: client, logger: logger, metrics: m, done: make(chan struct{})}
	if cfg.Mode == ModeBatch {
		if cfg.BufferSize <= 0 || cfg.MaxBatchSize <= 0 {
			return nil, fmt.Errorf("audit webhook batch buffer size and max size must be positive")
		}
		b.buffer = make(chan *Event, cfg.BufferSize)
		if cfg.ThrottleEnable {
			b.limiter = rate.NewLimiter(rate.Limit(cfg.ThrottleQPS), cfg.ThrottleBurst)
		}
	}
	m.PluginError(PluginWebhook, 0)
	return b, nil
}

// ProcessEvents implements Backend.
func (b *WebhookBackend) ProcessEvents(events ...*Event) bool {
	if b.cfg.Mode != ModeBatch {
		b.mu.RLock()
		closed := b.closed
		b.mu.RUnlock()
		if closed {
			b.metrics.PluginError(PluginWebhook, len(events))
			return false
		}
		err := b.send(context.Background(), events)
		if err != nil {
			b.metrics.PluginError(PluginWebhook, len(events))
			b.logger.Error("audit webhook", "err", err, "events", len(events))
			return b.cfg.Mode != ModeBlockingStrict
		}
		return true
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		b.metrics.PluginError(PluginWebhook, len(events))
		return false
	}
	for i, ev := range events {
		select {
		case b.buffer <- ev:
		default:
			b.metrics.PluginError(PluginWebhook, len(events)-i)
			// Dropped, and the request goes on (upstream's buffered
			// backend returns true here too).
			b.logger.Error("audit webhook: audit buffer queue blocked", "dropped", len(events)-i)
			return true
		}
	}
	return true
}

// Run starts the batching goroutine (batch mode).
func (b *WebhookBackend) Run(<-chan struct{}) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.started {
		return errors.New("audit webhook backend: Run after Shutdown or twice")
	}
	b.started = true
	if b.cfg.Mode == ModeBatch {
		go b.batchLoop()
	} else {
		close(b.done)
	}
	return nil
}

// Shutdown stops accepting events, sends every buffered one and waits for
// the sends in flight.
func (b *WebhookBackend) Shutdown() {
	b.shutdown.Do(func() {
		b.mu.Lock()
		b.closed = true
		started := b.started
		if b.buffer != nil {
			close(b.buffer)
		}
		b.mu.Unlock()
		if b.cfg.Mode == ModeBatch {
			if started {
				<-b.done
			} else {
				b.batchLoop()
			}
		}
		b.sends.Wait()
	})
}

// batchLoop collects batches until the buffer is closed and drained.
func (b *WebhookBackend) batchLoop() {
	defer close(b.done)
	for {
		batch, more := b.collect()
		if len(batch) > 0 {
			if b.limiter != nil {
				_ = b.limiter.Wait(context.Background())
			}
			b.sends.Add(1)
			go func() {
				defer b.sends.Done()
				if err := b.send(context.Background(), batch); err != nil {
					b.metrics.PluginError(PluginWebhook, len(batch))
					b.logger.Error("audit webhook", "err", err, "events", len(batch))
				}
			}()
		}
		if !more {
			return
		}
	}
}

// collect returns up to MaxBatchSize events, waiting at most MaxBatchWait
// after the first; more is false once the buffer is closed and empty.
func (b *WebhookBackend) collect() (batch []*Event, more bool) {
	ev, ok := <-b.buffer
	if !ok {
		return nil, false
	}
	batch = append(batch, ev)
	timer := time.NewTimer(b.cfg.MaxBatchWait)
	defer timer.Stop()
	for len(batch) < b.cfg.MaxBatchSize {
		select {
		case ev, ok := <-b.buffer:
			if !ok {
				return batch, false
			}
			batch = append(batch, ev)
		case <-timer.C:
			return batch, true
		}
	}
	return batch, true
}

// eventList is audit.k8s.io/v1 EventList.
type eventList struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Metadata   map[string]string `json:"metadata"`
	Items      []*Event          `json:"items"`
}

// send POSTs events as one EventList, retrying failures (connection
// errors, 5xx, 429) with a backoff doubling from InitialBackoff.
func (b *WebhookBackend) send(ctx context.Context, events []*Event) error {
	body, err := json.Marshal(eventList{Kind: "EventList", APIVersion: GroupVersion, Metadata: map[string]string{}, Items: events})
	if err != nil {
		return fmt.Errorf("encode events: %w", err)
	}
	wait := b.cfg.InitialBackoff
	var last error
	for attempt := 0; attempt <= webhookRetries; attempt++ {
		if attempt > 0 {
			time.Sleep(wait)
			wait *= 2
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := b.client.Do(req)
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			return nil
		case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
			last = fmt.Errorf("webhook answered %s", resp.Status)
		default:
			return fmt.Errorf("webhook answered %s", resp.Status)
		}
	}
	return last
}

// Union is a Backend that hands every event to all of its backends.
type Union []Backend

// ProcessEvents implements Backend: true only if every backend accepted.
func (u Union) ProcessEvents(events ...*Event) bool {
	ok := true
	for _, b := range u {
		ok = b.ProcessEvents(events...) && ok
	}
	return ok
}

// Run implements Backend.
func (u Union) Run(stopCh <-chan struct{}) error {
	for _, b := range u {
		if err := b.Run(stopCh); err != nil {
			return err
		}
	}
	return nil
}

// Shutdown implements Backend.
func (u Union) Shutdown() {
	for _, b := range u {
		b.Shutdown()
	}
}
